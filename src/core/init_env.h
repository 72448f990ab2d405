// Builds the world communicator from a launcher's environment (chorus-run, torchrun,
// mpirun, srun): finds rank/size/store, hosts the store on rank 0 when needed.
#pragma once
#include <memory>

#include "chorus/options.h"
#include "config/environment.h"
#include "core/comm.h"

namespace chorus::core {

Result<std::unique_ptr<Comm>> init_from_env(const Options& options,
                                            const config::Environment& env);

}  // namespace chorus::core
