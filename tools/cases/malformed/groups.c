// groups.c: sweep-like files (the good fixture as group `cfg` of a new
// file): --group naming a group that is not there, a group without the
// first dataset the chapter reads, --group naming a dataset.
#include <string.h>

#include "malformed.h"

// A dataset the chapter reads: its first input, or (a chapter that reads
// no input, the data-loading one) its first weight.
static const char *first_read(const Chapter *ch) { return ch->n_inputs ? ch->inputs[0] : ch->weights[0]; }

// A sweep-like file: the good fixture as group `cfg` of a new file.
void group_cases(const Chapter *ch) {
    char src[4096], path[4096], extra[256];
    good_path(ch, src, sizeof src);
    hid_t in = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT);
    MUST(in);

    case_path(ch, "group_missing", path, sizeof path);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    MUST(f);
    MUST(H5Ocopy(in, "/", f, "cfg", H5P_DEFAULT, H5P_DEFAULT));
    MUST(H5Fclose(f));
    record("group_missing", ch, path, "--group no_such_group", "no_such_group", "prefix");

    case_path(ch, "group_input_missing", path, sizeof path);
    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    MUST(f);
    MUST(H5Ocopy(in, "/", f, "cfg", H5P_DEFAULT, H5P_DEFAULT));
    char link[4 + 256];
    snprintf(link, sizeof link, "cfg/%s", first_read(ch));
    MUST(H5Ldelete(f, link, H5P_DEFAULT));
    MUST(H5Fclose(f));
    record("group_input_missing", ch, path, "--group cfg", first_read(ch), "prefix");
    H5Fclose(in);

    // --group naming a dataset.
    f = begin(ch, "group_is_dataset", path, sizeof path);
    MUST(H5Fclose(f));
    snprintf(extra, sizeof extra, "--group %s", first_read(ch));
    record("group_is_dataset", ch, path, extra, first_read(ch), "prefix");
}
