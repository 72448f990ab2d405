// Umbrella header: include this to use Chorus.
#pragma once
#include "chorus/bucketer.h"
#include "chorus/communicator.h"
#include "chorus/info.h"
#include "chorus/memory.h"
#include "chorus/options.h"
#include "chorus/status.h"
#include "chorus/store.h"
#include "chorus/stream.h"
#include "chorus/types.h"
#include "chorus/work.h"
