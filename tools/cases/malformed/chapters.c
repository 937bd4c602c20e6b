// chapters.c: the chapters the catalogue breaks: chapters.txt's table
// (program, draws, variants; the variant broken is the book's, or `small`
// where the chapter lists one), and from each book fixture what the
// chapter reads: its datasets with role "input", "weight" or "random", its
// first gradient record, its root attributes but the exporter's provenance
// (of the digest records, the first).
#include <errno.h>
#include <string.h>

#include "malformed.h"

Chapter chapters[MAX_CHAPTERS];
int n_chapters;

// --- attributes ------------------------------------------------------------------

// The exporter's provenance records (tools/export/write.py, provenance):
// written for people and for --check, read by no chapter.
static int is_provenance(const char *name) {
    static const char *const names[] = {"variant", "mirrors", "command", "torch_version", "torch_config", "blas",
                                        "cpu_capability", "inputs_seed"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

int has_attr(const Chapter *ch, const char *name) {
    for (int i = 0; i < ch->n_attrs; i++)
        if (!strcmp(ch->attrs[i].name, name)) return 1;
    return 0;
}

void read_chapter_table(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) fatal("%s: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "#\n")] = '\0';
        char program[128], draws[16], variants[512], cells[128];
        int n = sscanf(line, "%127s %15s %511s %127s", program, draws, variants, cells);
        if (n <= 0) continue;
        if (n != 4) fatal("%s:%d: expected 4 columns (program draws variants cells), found %d", path, lineno, n);
        if (strcmp(draws, "yes") && strcmp(draws, "no"))
            fatal("%s:%d: draws: expected yes or no, found '%s'", path, lineno, draws);
        if (n_chapters == MAX_CHAPTERS) fatal("%s: more than %d chapters", path, MAX_CHAPTERS);
        Chapter *ch = &chapters[n_chapters++];
        memset(ch, 0, sizeof *ch);
        snprintf(ch->name, sizeof ch->name, "%s", program);
        snprintf(ch->variant, sizeof ch->variant, "%.*s", (int)strcspn(variants, ","), variants);
        // A chapter whose book fixture takes seconds to run (the bonus
        // notebook at its own size, (8, 1024, 768)) lists a variant `small`:
        // the catalogue breaks that one, whose every case runs in milliseconds.
        for (char *v = variants; *v; v += strcspn(v, ",") + (v[strcspn(v, ",")] == ',')) {
            size_t k = strcspn(v, ",");
            if (k == 5 && !strncmp(v, "small", 5)) snprintf(ch->variant, sizeof ch->variant, "small");
        }
        ch->draws = !strcmp(draws, "yes");
    }
    fclose(f);
    if (n_chapters == 0) fatal("%s: no chapters", path);
}

static herr_t visit_dataset(hid_t loc, const char *name, const H5L_info_t *info, void *data) {
    (void)info;
    Chapter *ch = data;
    H5O_info_t oi;
    if (H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET) return 0;
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    MUST(ds);
    char role[32] = "";
    if (H5Aexists(ds, "role") > 0) {
        hid_t attr = H5Aopen(ds, "role", H5P_DEFAULT), type = H5Aget_type(attr);
        char *text = NULL;
        if (H5Tis_variable_str(type) > 0 && H5Aread(attr, type, &text) >= 0 && text) {
            snprintf(role, sizeof role, "%s", text);
            H5free_memory(text);
        }
        H5Tclose(type);
        H5Aclose(attr);
    }
    hid_t space = H5Dget_space(ds);
    int rank = H5Sget_simple_extent_ndims(space);
    H5Sclose(space);
    H5Dclose(ds);
    if (!strcmp(role, "input") && ch->n_inputs < MAX_NAMES) {
        ch->input_rank[ch->n_inputs] = rank;
        snprintf(ch->inputs[ch->n_inputs++], sizeof ch->inputs[0], "%s", name);
    } else if ((!strcmp(role, "weight") || !strcmp(role, "random")) && ch->n_weights < MAX_NAMES) {
        snprintf(ch->weights[ch->n_weights++], sizeof ch->weights[0], "%s", name);
    } else if (!strcmp(role, "output") && !ch->grad[0] && strlen(name) > 5 && !strcmp(name + strlen(name) - 5, ".grad")) {
        snprintf(ch->grad, sizeof ch->grad, "%s", name);
    }
    return 0;
}

static herr_t visit_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    Chapter *ch = data;
    if (is_provenance(name) || ch->n_attrs == MAX_NAMES) return 0;
    const char *dot = strrchr(name, '.');
    const int digest = dot && (!strcmp(dot, ".role") || !strcmp(dot, ".sha256") || !strcmp(dot, ".shape"));
    // Only the first digest record gets cases (below): the others are not
    // kept, so that a fixture of many digests (the bonus notebook's) leaves
    // room for its settings.
    for (int i = 0; digest && i < ch->n_attrs; i++)
        if (ch->attrs[i].digest) return 0;
    hid_t attr = H5Aopen(loc, name, H5P_DEFAULT), type = H5Aget_type(attr);
    RootAttr *a = &ch->attrs[ch->n_attrs++];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->cls = H5Tget_class(type);
    a->digest = digest;
    H5Tclose(type);
    H5Aclose(attr);
    return 0;
}

void describe_chapter(Chapter *ch) {
    char path[4096];
    good_path(ch, path, sizeof path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fatal("%s: cannot open the book fixture of %s", path, ch->name);
    hsize_t idx = 0;
    MUST(H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, &idx, visit_dataset, ch));
    idx = 0;
    MUST(H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, &idx, visit_attr, ch));
    MUST(H5Fclose(f));
    if (ch->n_inputs == 0 && ch->n_weights == 0) fatal("%s: no dataset with role \"input\" or \"weight\"", path);
}
