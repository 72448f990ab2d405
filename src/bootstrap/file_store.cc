// FileStore: every key is a file in one directory (shared by the job's ranks, e.g. on a
// shared file system). Values are written to a temporary file and rename()d into place, so
// readers see all or nothing; get/wait poll with short sleeps; add is serialised by flock().
#include "bootstrap/file_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "diag/log.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace chorus::bootstrap {
namespace {

constexpr auto kAddTimeout = std::chrono::seconds(60);

// A file name for `key`: "k." + the key with every byte outside [A-Za-z0-9_.-] as %XX;
// long names are cut and completed with a hash so they stay under NAME_MAX.
std::string file_name(const std::string& key) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "k.";
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (out.size() > 200) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the whole key
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    out = out.substr(0, 180) + str_printf("~%016llx", static_cast<unsigned long long>(h));
  }
  return out;
}

// Sleeps a little longer each round (1 ms growing to 10 ms), never past the deadline.
class Backoff {
 public:
  void sleep(Deadline d) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(ms_, d.remaining_ms(ms_))));
    ms_ = std::min(ms_ * 2, 10);
  }

 private:
  int ms_ = 1;
};

class FileStore final : public Store {
 public:
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}

  Status set(const std::string& key, const Bytes& value) override {
    return write_atomically(path(key), value).with_context("file store set of key '" + key + "'");
  }

  Result<Bytes> get(const std::string& key, Deadline deadline) override {
    Backoff backoff;
    while (true) {
      std::optional<Bytes> v;
      CHORUS_RETURN_IF_ERROR(read_file(path(key), v));
      if (v) return std::move(*v);
      if (deadline.expired())
        return timeout_error(str_printf("timed out waiting for key '%s' in file store %s",
                                        key.c_str(), dir_.c_str()));
      backoff.sleep(deadline);
    }
  }

  Result<std::int64_t> add(const std::string& key, std::int64_t delta) override;

  Status wait(const std::vector<std::string>& keys, Deadline deadline) override {
    Backoff backoff;
    for (const auto& k : keys) {
      while (::access(path(k).c_str(), F_OK) != 0) {
        if (errno != ENOENT) return io_error("file store: checking " + path(k), errno);
        if (deadline.expired())
          return timeout_error(str_printf("timed out waiting for key '%s' (%zu keys awaited) in "
                                          "file store %s", k.c_str(), keys.size(), dir_.c_str()));
        backoff.sleep(deadline);
      }
    }
    return Status();
  }

  Result<bool> check(const std::string& key) override {
    if (::access(path(key).c_str(), F_OK) == 0) return true;
    if (errno == ENOENT) return false;
    return io_error("file store: checking " + path(key), errno);
  }

 private:
  std::string path(const std::string& key) const { return dir_ + "/" + file_name(key); }
  Status write_atomically(const std::string& target, const Bytes& value);
  // `out` stays empty when the file does not exist.
  Status read_file(const std::string& p, std::optional<Bytes>& out);

  const std::string dir_;
};

Status FileStore::write_atomically(const std::string& target, const Bytes& value) {
  static std::atomic<std::uint64_t> counter{0};
  std::string tmp = str_printf("%s/.tmp.%d.%llu", dir_.c_str(), static_cast<int>(::getpid()),
                               static_cast<unsigned long long>(counter.fetch_add(1)));
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) return io_error("creating " + tmp, errno);
  std::size_t done = 0;
  while (done < value.size()) {
    ssize_t k = ::write(fd.get(), value.data() + done, value.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      return io_error("writing " + tmp, err);
    }
    done += static_cast<std::size_t>(k);
  }
  fd.reset();
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return io_error("renaming " + tmp + " to " + target, err);
  }
  return Status();
}

Status FileStore::read_file(const std::string& p, std::optional<Bytes>& out) {
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return Status();
    return io_error("opening " + p, errno);
  }
  Bytes data;
  std::uint8_t buf[64 * 1024];
  while (true) {
    ssize_t k = ::read(fd.get(), buf, sizeof(buf));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return io_error("reading " + p, errno);
    if (k == 0) break;
    data.insert(data.end(), buf, buf + k);
  }
  out = std::move(data);
  return Status();
}

Result<std::int64_t> FileStore::add(const std::string& key, std::int64_t delta) {
  std::string lock_path = dir_ + "/.add.lock";
  UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock.valid()) return io_error("file store: opening " + lock_path, errno);
  Deadline deadline = Deadline::after(kAddTimeout);
  Backoff backoff;
  while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return io_error("file store: locking " + lock_path, errno);
    if (deadline.expired())
      return timeout_error(str_printf("file store add of key '%s': %s stayed locked",
                                      key.c_str(), lock_path.c_str()));
    backoff.sleep(deadline);
  }
  // The lock is released when `lock` closes.
  std::optional<Bytes> old;
  CHORUS_RETURN_IF_ERROR(read_file(path(key), old));
  std::int64_t value = 0;
  if (old) {
    auto v = parse_int(std::string(old->begin(), old->end()));
    if (!v)
      return invalid_argument(str_printf("file store key '%s' does not hold a decimal counter",
                                         key.c_str()));
    value = *v;
  }
  value += delta;
  std::string text = std::to_string(value);
  CHORUS_RETURN_IF_ERROR(write_atomically(path(key), Bytes(text.begin(), text.end()))
                             .with_context("file store add of key '" + key + "'"));
  return value;
}

}  // namespace

Result<std::shared_ptr<Store>> open_file_store(const std::string& directory) {
  if (directory.empty()) return invalid_argument("file store directory must not be empty");
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return Status(ErrorCode::kIo, "creating file store directory " + directory + ": " + ec.message());
  if (!std::filesystem::is_directory(directory, ec))
    return Status(ErrorCode::kIo, "file store path " + directory + " is not a directory");
  CHORUS_LOG(DEBUG, Boot, "file store at %s", directory.c_str());
  return std::shared_ptr<Store>(std::make_shared<FileStore>(directory));
}

}  // namespace chorus::bootstrap
