// Packing and printing of operation signatures.
#include "op/signature.h"

#include "transport/transport.h"
#include "util/strings.h"

namespace chorus::op {

namespace {
constexpr int kKindBits = 5, kDtypeBits = 4, kOpBits = 3, kRootBits = 16;
constexpr int kDtypeShift = kKindBits;
constexpr int kOpShift = kDtypeShift + kDtypeBits;
constexpr int kRootShift = kOpShift + kOpBits;
constexpr int kCountShift = kRootShift + kRootBits;
constexpr int kCountBits = 62 - kCountShift;  // bits 62, 63: kSigPerPeer, kSigUnordered
constexpr std::uint64_t mask(int bits) { return (std::uint64_t{1} << bits) - 1; }
constexpr std::uint64_t kFlagBits = transport::kSigPerPeer | transport::kSigUnordered;
static_assert(((mask(kCountBits) << kCountShift) & kFlagBits) == 0,
              "the signature's fields stay clear of the transport's flag bits");

const char* dtype_name(unsigned v) {
  static const char* kNames[] = {"int8",    "uint8",    "int32",   "uint32",  "int64",
                                 "uint64",  "float16",  "bfloat16", "float32", "float64"};
  return v < 10 ? kNames[v] : "?";
}
const char* op_name(unsigned v) {
  static const char* kNames[] = {"sum", "prod", "min", "max", "avg"};
  return v < 5 ? kNames[v] : "?";
}
}  // namespace

std::uint64_t make_signature(CollKind kind, DataType dtype, std::size_t count, ReduceOp op,
                             bool has_op, int root, bool has_root) {
  std::uint64_t sig = (static_cast<std::uint64_t>(kind) + 1) & mask(kKindBits);
  sig |= (static_cast<std::uint64_t>(dtype) & mask(kDtypeBits)) << kDtypeShift;
  if (has_op) sig |= (static_cast<std::uint64_t>(op) & mask(kOpBits)) << kOpShift;
  if (has_root) sig |= (static_cast<std::uint64_t>(root + 1) & mask(kRootBits)) << kRootShift;
  sig |= (static_cast<std::uint64_t>(count) & mask(kCountBits)) << kCountShift;
  return sig;
}

std::uint64_t p2p_signature(std::size_t bytes) {
  return make_signature(CollKind::kSend, DataType::kUint8, bytes, ReduceOp::kSum, false, 0,
                        false) |
         transport::kSigPerPeer;  // p2p seqs count per peer pair
}

std::string describe_signature(std::uint64_t sig) {
  // How the sender ran it and how its seqs count, not what it is.
  sig &= ~kFlagBits;
  if (sig == 0) return "(no signature)";
  const unsigned kind = static_cast<unsigned>(sig & mask(kKindBits)) - 1;
  const unsigned dtype = static_cast<unsigned>((sig >> kDtypeShift) & mask(kDtypeBits));
  const unsigned op = static_cast<unsigned>((sig >> kOpShift) & mask(kOpBits));
  const unsigned root = static_cast<unsigned>((sig >> kRootShift) & mask(kRootBits));
  const unsigned long long count = (sig >> kCountShift) & mask(kCountBits);
  const char* name = to_string(static_cast<CollKind>(kind));
  if (static_cast<CollKind>(kind) == CollKind::kBarrier) return std::string(name) + "()";
  std::string out = str_printf("%s(%s x %llu", name, dtype_name(dtype), count);
  const bool reduces = static_cast<CollKind>(kind) == CollKind::kAllReduce ||
                       static_cast<CollKind>(kind) == CollKind::kReduce ||
                       static_cast<CollKind>(kind) == CollKind::kReduceScatter;
  if (reduces) out += str_printf(", %s", op_name(op));
  if (root > 0) out += str_printf(", root %u", root - 1);
  return out + ")";
}

}  // namespace chorus::op
