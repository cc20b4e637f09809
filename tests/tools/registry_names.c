/* SPDX-License-Identifier: MIT */
/*
 * registry_names -- prints one line per allocator of the registry:
 *     <name> <family> <malloc bound>
 * family one of system, heap, buddy, tree, pages (rt_family_t), the bound as the descriptor
 * writes it (it may hold spaces: it is the rest of the line). With arguments, only the families
 * named, e.g. `registry_names heap buddy pages`.
 *
 * Scripts that run something once per allocator (tests/tools/dropin_programs.sh) take their list from
 * here, so that an allocator added to the registry is tested without editing the script, and a
 * family is chosen by the descriptor's property, never by a name prefix.
 */
#include <stdio.h>
#include <string.h>

#include <rtalloc/registry.h>

static const char *family_name(rt_family_t family)
{
    switch (family) {
    case RT_FAMILY_SYSTEM: return "system";
    case RT_FAMILY_HEAP: return "heap";
    case RT_FAMILY_BUDDY: return "buddy";
    case RT_FAMILY_TREE: return "tree";
    case RT_FAMILY_PAGES: return "pages";
    case RT_FAMILY_TREE_CACHED: return "tree-cached";
    case RT_FAMILY_THREAD_HEAPS: return "thread-heaps";
    }
    return "unknown";
}

int main(int argc, char **argv)
{
    size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);
    for (size_t i = 0; i < count; i++) {
        const char *family = family_name(all[i]->family);
        int wanted = argc < 2;
        for (int a = 1; a < argc && !wanted; a++) {
            wanted = strcmp(argv[a], family) == 0;
        }
        if (wanted) {
            printf("%s %s %s\n", all[i]->name, family, all[i]->malloc_bound);
        }
    }
    return count == 0 ? 1 : 0;
}
