// locate.h: where a chapter finds what it reads, wherever the program is.
//
// Nothing of the source tree is compiled in. A chapter finds its fixtures
// by name in three places, in this order:
//   1. beside the program: the directory of /proc/self/exe (the build puts
//      every fixture a chapter reads beside it in build/chapters/);
//   2. the installed data directory, found from the program: bindir's way to
//      <datadir>/litattn/fixtures (`../share/litattn/fixtures` for the
//      default layout), so that a prefix copied or staged elsewhere
//      (DESTDIR) still finds its data;
//   3. the installed data directory as configured: <prefix>/<datadir>/litattn/fixtures.
// Then among the files built into the chapter (tools/build/embed_snapshots.c):
// each of its variants' fixtures, and for the data-loading chapter the
// book's text and GPT-2's vocabulary. So the program copied alone anywhere
// runs its book variant.
//
// A path (a value with a '/', or a name that exists in the working
// directory) is used as given and never looked up.
#ifndef LITATTN_LOCATE_H
#define LITATTN_LOCATE_H

#include <limits.h>
#include <stddef.h>

#include "hdf5_snapshot.h"

// A file built into the chapter as it is (not a fixture): the book's text,
// the vocabulary.
typedef struct BuiltinFile {
    const char *name;  // its file name in fixtures/gpt2/, without the directory
    const unsigned char *bytes;
    size_t size;
} BuiltinFile;

typedef struct BuiltinFiles {
    const BuiltinFile *table;
    int n;
} BuiltinFiles;

#define LOCATE_MAX_PLACES 3

// The directories looked in, in order, each once: found by locate_find_places
// (chapter_begin, into the run).
typedef struct {
    char dir[LOCATE_MAX_PLACES][PATH_MAX];
    int n;
    int beside;           // dir[0] is the program's directory
    char no_exe[160];     // why the program's directory is unknown, if it is
} LocatePlaces;

void locate_find_places(LocatePlaces *places);

// Where a fixture is: a file to open (path), or the copy built in (builtin).
typedef struct {
    char *path;                       // malloc'd; NULL when built in
    const ShippedSnapshot *builtin;   // NULL when a file
} Located;

// --fixture's value (NULL: the book's variant) for chapter `chapter` whose
// built-in fixtures are `shipped`. A value is a path when it holds a '/' or
// names something in the working directory; else a variant ("seed42",
// looked up as "<chapter>.seed42.h5") or a file name ending in ".h5"
// ("sweep.h5"), looked up in the places above, then built in. Returns 1, or
// 0 with one line in err saying where it looked.
int locate_fixture(const LocatePlaces *places, const char *value, const char *chapter, const char *book_variant,
                   const ShippedSnapshots *shipped, Located *out, char *err, size_t len);
void located_free(Located *l);

// A file built into the chapter by name ("gpt2.tiktoken"), or NULL.
const BuiltinFile *locate_builtin_file(const BuiltinFiles *files, const char *name);

// "seed123, seed42": the variants built in, from their file names
// "<chapter>.<variant>.h5".
void locate_variants(const ShippedSnapshots *shipped, const char *chapter, char *buf, size_t len);

// The directories looked in, in order (i from 0 to locate_place_count() - 1);
// *beside says whether it is the program's own.
int locate_place_count(const LocatePlaces *places);
const char *locate_place(const LocatePlaces *places, int i, int *beside);
// The places looked in, for --help and messages: "beside the program (DIR),
// in DIR2 and in DIR3" (each directory once).
void locate_places(const LocatePlaces *places, char *buf, size_t len);

#endif
