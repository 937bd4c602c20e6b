// files.c: the file-level cases of one chapter: the good copy, cut short
// (inside the signature, the superblock, the first object headers, the
// middle, one byte before the end), empty, text, the HDF5 signature then
// garbage, a directory, unreadable, missing, a FIFO, a device, symbolic
// links to itself and to nothing, a path through a file, a name of terminal
// controls, another chapter's good fixture. must-mention is empty (the
// path is enough) but for the name and the other chapter.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "malformed.h"

void file_cases(const Chapter *ch, const Chapter *other) {
    char src[4096], path[4096];
    good_path(ch, src, sizeof src);
    size_t n;
    unsigned char *bytes = slurp(src, &n);

    case_path(ch, "good", path, sizeof path);
    spit(path, bytes, n);
    record("good", ch, path, "", "", "prefix");

    // Cut short: inside the signature, the superblock, the first object
    // headers, the middle, and one byte before the end.
    const struct { const char *kase; size_t len; } cuts[] = {
        {"truncated_8", 8}, {"truncated_100", 100}, {"truncated_512", 512},
        {"truncated_half", n / 2}, {"truncated_size_minus_1", n - 1},
    };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        case_path(ch, cuts[i].kase, path, sizeof path);
        spit(path, bytes, cuts[i].len);
        record(cuts[i].kase, ch, path, "", "", "prefix");
    }

    case_path(ch, "empty_file", path, sizeof path);
    spit(path, "", 0);
    record("empty_file", ch, path, "", "", "prefix");

    static const char text[] = "inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]])\n";
    case_path(ch, "text_file", path, sizeof path);
    spit(path, text, sizeof text - 1);
    record("text_file", ch, path, "", "", "prefix");

    // The HDF5 signature, then 2 KiB that are no superblock.
    unsigned char junk[2048];
    memcpy(junk, "\211HDF\r\n\032\n", 8);
    unsigned x = 12345u;
    for (size_t i = 8; i < sizeof junk; i++) junk[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
    case_path(ch, "signature_then_garbage", path, sizeof path);
    spit(path, junk, sizeof junk);
    record("signature_then_garbage", ch, path, "", "", "prefix");

    case_path(ch, "directory", path, sizeof path);
    if (mkdir(path, 0755) != 0) fatal("%s: %s", path, strerror(errno));
    record("directory", ch, path, "", "", "prefix");

    // As root this file is readable anyway: the checker then skips the case.
    case_path(ch, "unreadable", path, sizeof path);
    spit(path, bytes, n);
    if (chmod(path, 0) != 0) fatal("%s: %s", path, strerror(errno));
    record("unreadable", ch, path, "", "", "prefix");

    case_path(ch, "missing_file", path, sizeof path);
    record("missing_file", ch, path, "", "", "prefix");

    // Paths that are no regular file: a FIFO (opening one blocks until a
    // writer comes), a device, a symbolic link to itself or to nothing, and
    // a path that goes through a file as if it were a directory.
    case_path(ch, "fifo", path, sizeof path);
    if (mkfifo(path, 0644) != 0) fatal("%s: %s", path, strerror(errno));
    record("fifo", ch, path, "", "", "prefix");
    record("device", ch, "/dev/null", "", "", "prefix");
    case_path(ch, "symlink_loop", path, sizeof path);
    if (symlink(path, path) != 0) fatal("%s: %s", path, strerror(errno));
    record("symlink_loop", ch, path, "", "", "prefix");
    case_path(ch, "symlink_dangling", path, sizeof path);
    if (symlink("no_such_target.h5", path) != 0) fatal("%s: %s", path, strerror(errno));
    record("symlink_dangling", ch, path, "", "", "prefix");
    char through[4200];
    case_path(ch, "good", path, sizeof path);
    snprintf(through, sizeof through, "%s/inputs.h5", path);
    record("path_through_a_file", ch, through, "", "", "prefix");

    // A name full of terminal controls (ESC, BEL, DEL, C1 CSI raw and as
    // UTF-8), on a file cut short: the error quotes the name, escaped.
    char named[4400];
    snprintf(named, sizeof named, "%s/%.127s/name_\x1b[2J\x07\x7f\x9b\xc2\x9b.h5", catalogue.out, ch->name);
    spit(named, bytes, 100);
    record("control_characters_in_name", ch, named, "", "\\x1b[2J\\x07\\x7f\\x9b\\xc2\\x9b", "prefix");

    // Another chapter's good fixture.
    char theirs[4096];
    good_path(other, theirs, sizeof theirs);
    unsigned char *their_bytes = slurp(theirs, &n);
    case_path(ch, "wrong_chapter", path, sizeof path);
    spit(path, their_bytes, n);
    free(their_bytes);
    record("wrong_chapter", ch, path, "", "chapter", "prefix");
    free(bytes);
}
