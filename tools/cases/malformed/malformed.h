// malformed.h: what the units of make_malformed share (tools/cases/malformed/):
// a chapter as chapters.txt and its book fixture describe it, the
// catalogue being written, and the helpers every family of cases uses: the
// case's copy of the good fixture and its line in the manifest
// (catalogue.c), HDF5 edits of the copy (edit.c). Each family of cases
// (files.c, groups.c, inputs.c, datasets.c, outside.c, shapes.c,
// consistency.c, attributes.c, biases.c) writes its cases for one chapter,
// in the order main.c calls them, which is the catalogue's order.
#ifndef LITATTN_MALFORMED_H
#define LITATTN_MALFORMED_H

#include <hdf5.h>
#include <stdio.h>

#define MAX_CHAPTERS 64
#define MAX_NAMES 64

typedef struct {
    char name[128];
    H5T_class_t cls;
    int digest;  // <tensor>.role/.sha256/.shape: a digest-only tensor's record, for fixture_check
} RootAttr;

// A chapter as chapters.txt and its book fixture describe it.
typedef struct {
    char name[128], variant[64];
    int draws;                           // "yes" in chapters.txt: takes --seed
    char inputs[MAX_NAMES][128];         // datasets with role "input", in name order
    int input_rank[MAX_NAMES], n_inputs;
    char weights[MAX_NAMES][128];        // role "weight" or "random"
    int n_weights;
    char grad[128];                      // the first gradient record in name order ("batch.grad"), or ""
    RootAttr attrs[MAX_NAMES];           // root attributes other than provenance
    int n_attrs;
} Chapter;

// The chapters of chapters.txt, in its order (chapters.c).
extern Chapter chapters[MAX_CHAPTERS];
extern int n_chapters;

// The catalogue being written (catalogue.c).
typedef struct {
    const char *fixtures;     // the source tree's fixtures/
    char out[4096];           // OUT_DIR, absolute
    FILE *manifest;
    int cases;
    char kinds[128][48];      // distinct kinds seen, for the summary
    int n_kinds;
} Catalogue;
extern Catalogue catalogue;

// "make_malformed: " and the message on stderr, exit 1.
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

// HDF5 calls here must all succeed: a failure is a bug in this generator.
#define MUST(x)                                                   \
    do {                                                             \
        if ((x) < 0) fatal("%s:%d: %s failed", __FILE__, __LINE__, #x); \
    } while (0)

// --- the chapters (chapters.c) ---
// Reads chapters.txt: program, draws, variants (the first is the book's), official cells.
void read_chapter_table(const char *path);
// What the book fixture holds: the datasets a chapter reads, and its attributes.
void describe_chapter(Chapter *ch);
int has_attr(const Chapter *ch, const char *name);

// --- files and the manifest (catalogue.c) ---
// Removes `path` and, if it is a directory, everything under it.
void remove_tree(const char *path);
unsigned char *slurp(const char *path, size_t *len);
void spit(const char *path, const void *data, size_t len);
// The chapter's good fixture: FIXTURES_DIR/<chapter>.<variant>.h5
void good_path(const Chapter *ch, char *buf, size_t len);
// OUT_DIR/<chapter>/<case>.h5, with the case's ':' (kind:dataset) as '-'.
void case_path(const Chapter *ch, const char *kase, char *buf, size_t len);
// The case's line of the manifest.
void record(const char *kase, const Chapter *ch, const char *path, const char *extra, const char *mention,
            const char *rule);
// Copies the chapter's good fixture to the case's path and opens it for writing.
hid_t begin(const Chapter *ch, const char *kase, char *path, size_t len);
// Closes the copy and records the case.
void end(hid_t f, const char *kase, const Chapter *ch, const char *path, const char *mention, const char *rule);

// --- HDF5 edits (edit.c) ---
#define MAX_RANK 4

typedef struct {
    int rank;
    hsize_t dims[MAX_RANK];
    size_t n;
    float *data;
} Array;

// An integer attribute of the root, which must be there.
long long root_int(hid_t loc, const char *name);
Array read_array(hid_t loc, const char *name);
void put_string_attr(hid_t loc, const char *name, const char *value);
// An attribute of file type `ftype` holding n values of memory type `mtype`
// (n == 0: a scalar holding one).
void put_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t n, const void *value);
void put_int_attr(hid_t loc, const char *name, long long v);
// An attribute of type `type` with a null dataspace (no value).
void put_null_attr(hid_t loc, const char *name, hid_t type);
// Replaces (or adds) dataset `name`: file type `ftype`, `rank` dims (rank -1:
// a null dataspace), filled from `data` of memory type `mtype` unless data is
// NULL. `dcpl` lays it out (H5P_DEFAULT: contiguous). Tagged with `role`.
void put_dataset(hid_t loc, const char *name, const char *role, hid_t ftype, int rank, const hsize_t *dims,
                 hid_t mtype, const void *data, hid_t dcpl);
void put_floats(hid_t loc, const char *name, const char *role, int rank, const hsize_t *dims, const float *v);

// --- the families of cases, each for one chapter ---
// files.c: the file itself (cut short, empty, text, a directory, unreadable,
// missing, not a regular file, a name of terminal controls, another
// chapter's); `other` is the chapter whose fixture that is.
void file_cases(const Chapter *ch, const Chapter *other);
// groups.c: --group naming a missing group, a dataset, or a group that
// lacks the first dataset read.
void group_cases(const Chapter *ch);
// inputs.c: input i (dataset_cases, then too many values, too many tokens, one token).
void input_cases(const Chapter *ch, int i);
// datasets.c: every kind of broken float32 dataset `name`, cases
// "<pfx>_<kind>:<name>"; `role` is its role attribute.
void dataset_cases(const Chapter *ch, const char *pfx, const char *name, const char *role);
// outside.c: dataset `name`'s values outside the file or behind a filter
// the reader lacks.
void outside_cases(const Chapter *ch, const char *pfx, const char *name, const char *role);
// shapes.c: a weight (or gradient record) of the right rank and the wrong shape.
void shape_cases(const Chapter *ch, const char *name, const char *pfx, const char *role);
// consistency.c: shapes that disagree with each other (inputs and weights, d_out).
void consistency_cases(const Chapter *ch);
// attributes.c: every kind of broken root attribute, by its own type, and
// the `chapter` attribute's wrong values.
void attr_cases(const Chapter *ch, const RootAttr *at);
void chapter_attr_cases(const Chapter *ch);
// biases.c: qkv_bias set with the biases missing or of the wrong shape or type.
void bias_cases(const Chapter *ch);

#endif
