// Command-line parsing of the peer benchmarks, with chorus-bench's flag names and sizes.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "peer_bench.h"

namespace compare {
namespace {

// "64K", "16M", "8" -> bytes; false when the text is not a size.
bool parse_bytes(const char* text, std::size_t* bytes) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || text[0] == '-') return false;
  std::string suffix(end);
  int shift = suffix.empty() || suffix == "B" ? 0
            : suffix == "K" || suffix == "KB" || suffix == "KiB" ? 10
            : suffix == "M" || suffix == "MB" || suffix == "MiB" ? 20
            : suffix == "G" || suffix == "GB" || suffix == "GiB" ? 30 : -1;
  if (shift < 0) return false;
  *bytes = static_cast<std::size_t>(v) << shift;
  return true;
}

bool parse_int(const char* text, int lo, int* out) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > (1 << 30)) return false;
  *out = static_cast<int>(v);
  return true;
}

// "all_reduce,broadcast" or "all" -> ops; false on an unknown name.
bool parse_ops(const char* text, std::vector<Op>* ops) {
  const Op all[] = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast,
                    Op::kAllToAll};
  ops->clear();
  std::string list(text);
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    std::string name = list.substr(start, comma == std::string::npos ? comma : comma - start);
    bool found = false;
    for (Op op : all)
      if (name == "all" || name == op_name(op)) ops->push_back(op), found = true;
    if (!found) return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return !ops->empty();
}

void usage(const char* prog) {
  std::printf(
      "usage: %s [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-c 0|1] [-r ROOT]\n"
      "          [--op all_reduce,all_gather,reduce_scatter,broadcast,all_to_all|all]\n"
      "          [--json FILE] [--store DIR] [--sync]\n"
      "Sizes as chorus-bench (bytes, K/M/G suffixes; float32, sum). Exit 1 on wrong results.\n"
      "--sync: a barrier before every timed iteration, each timed to its last rank's end.\n",
      prog);
}

}  // namespace

int parse_args(int argc, char** argv, const char* prog, Config* cfg) {
  static const option kLong[] = {
      {"minbytes", required_argument, nullptr, 'b'}, {"maxbytes", required_argument, nullptr, 'e'},
      {"stepfactor", required_argument, nullptr, 'f'}, {"iters", required_argument, nullptr, 'n'},
      {"warmup_iters", required_argument, nullptr, 'w'}, {"check", required_argument, nullptr, 'c'},
      {"root", required_argument, nullptr, 'r'}, {"op", required_argument, nullptr, 'O'},
      {"json", required_argument, nullptr, 'J'}, {"store", required_argument, nullptr, 'S'},
      {"sync", no_argument, nullptr, 'Y'},
      {"help", no_argument, nullptr, 'h'}, {nullptr, 0, nullptr, 0}};
  int c, factor = 2, check = 1;
  bool ok = true;
  while (ok && (c = getopt_long(argc, argv, "b:e:f:n:w:c:r:h", kLong, nullptr)) != -1) {
    switch (c) {
      case 'b': ok = parse_bytes(optarg, &cfg->min_bytes); break;
      case 'e': ok = parse_bytes(optarg, &cfg->max_bytes); break;
      case 'f': ok = parse_int(optarg, 2, &factor); break;
      case 'n': ok = parse_int(optarg, 1, &cfg->iters); break;
      case 'w': ok = parse_int(optarg, 0, &cfg->warmup_iters); break;
      case 'c': ok = parse_int(optarg, 0, &check); break;
      case 'r': ok = parse_int(optarg, 0, &cfg->root); break;
      case 'O': ok = parse_ops(optarg, &cfg->ops); break;
      case 'J': cfg->json_path = optarg; break;
      case 'S': cfg->store_path = optarg; break;
      case 'Y': cfg->sync = true; break;
      case 'h': usage(prog); return 0;
      default: ok = false; break;
    }
  }
  if (!ok || optind != argc || cfg->min_bytes > cfg->max_bytes) {
    std::fprintf(stderr, "%s: bad arguments\n", prog);
    usage(prog);
    return 2;
  }
  cfg->step_factor = static_cast<std::size_t>(factor);
  cfg->check = check != 0;
  return -1;
}

}  // namespace compare
