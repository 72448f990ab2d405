// Anchor source of libchorus.so: the rooms are linked in whole; this file only gives
// the shared library a translation unit of its own.
#include "chorus/chorus.h"
