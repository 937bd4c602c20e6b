// runtime.h: what the parts of the chapter runtime (chapter.c, config.c,
// draws.c, keep.c) share. Private to lib/: chapters include chapter.h.
#ifndef LITATTN_RUNTIME_H
#define LITATTN_RUNTIME_H

#include "cli.h"
#include "dump.h"
#include "fixture.h"

const Options *runtime_options(void);
Fixture *runtime_fixture(void);      // the fixture (or its --group) being read
Dump *runtime_dump(void);            // NULL without --dump
const char *runtime_fixture_label(void);  // how messages name it

#endif
