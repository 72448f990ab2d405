// File store: keys as files in a shared directory (written atomically via rename).
#pragma once
#include <memory>
#include <string>

#include "bootstrap/store.h"

namespace chorus::bootstrap {

// kIo when the directory cannot be created.
Result<std::shared_ptr<Store>> open_file_store(const std::string& directory);

}  // namespace chorus::bootstrap
