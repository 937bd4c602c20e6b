// checkpoint.h: torch.save(module.state_dict(), "model.pth") and
// torch.load("model.pth") as a chapter runs them: a real file, written by
// io/pth.h's writer (the zip archive torch 1.13 writes) and read back by its
// reader, so the chapter's state_dict makes the round trip the notebook's does.
//
// A chapter leaves nothing in the working directory: the file named in the
// notebook ("model.pth") is made in a fresh directory of its own,
// mkdtemp("$TMPDIR/litattn.XXXXXX") ($TMPDIR unset or empty: /tmp), made on
// the first save, and removed, the file with it, at chapter_end and when the
// run ends early (die(), a closed pipe: chapter_begin registers the cleanup
// with error_on_cleanup). The first save prints one note line saying so. The
// directory and the file are the run's (run->checkpoint); a chapter calls
// torch_save and torch_load without the run (chapter.h passes its own).
#ifndef LITATTN_CHECKPOINT_H
#define LITATTN_CHECKPOINT_H

#include "run.h"
#include "state_dict.h"

// torch.save(sd, name): name a plain file name ("model.pth").
void torch_save(Run *run, const StateDict *sd, const char *name);
// torch.load(name): the state_dict the last torch_save of that name wrote,
// read back from the file (its keys and order, each tensor bit for bit).
StateDict torch_load(const Run *run, const char *name);
// Removes the file and the directory, if made (chapter_end, and an early end).
void checkpoint_cleanup(Run *run);

#endif
