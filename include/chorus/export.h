// Symbol visibility for the public API: only chorus:: symbols marked CHORUS_EXPORT leave libchorus.
#pragma once
#define CHORUS_EXPORT __attribute__((visibility("default")))
