// Tests of operation signature packing and printing.
#include "op/signature.h"

#include <gtest/gtest.h>

#include "transport/transport.h"

namespace chorus::op {
namespace {

TEST(SignatureTest, DiffersWhenAnyFieldDiffers) {
  auto base = make_signature(CollKind::kAllReduce, DataType::kFloat32, 1024, ReduceOp::kSum,
                             true, 0, false);
  EXPECT_NE(base, 0u);
  EXPECT_NE(base, make_signature(CollKind::kAllGather, DataType::kFloat32, 1024, ReduceOp::kSum,
                                 false, 0, false));
  EXPECT_NE(base, make_signature(CollKind::kAllReduce, DataType::kInt32, 1024, ReduceOp::kSum,
                                 true, 0, false));
  EXPECT_NE(base, make_signature(CollKind::kAllReduce, DataType::kFloat32, 1025, ReduceOp::kSum,
                                 true, 0, false));
  EXPECT_NE(base, make_signature(CollKind::kAllReduce, DataType::kFloat32, 1024, ReduceOp::kMax,
                                 true, 0, false));
  EXPECT_NE(make_signature(CollKind::kBroadcast, DataType::kInt8, 7, ReduceOp::kSum, false, 1, true),
            make_signature(CollKind::kBroadcast, DataType::kInt8, 7, ReduceOp::kSum, false, 2, true));
}

TEST(SignatureTest, DescribesEveryField) {
  EXPECT_EQ(describe_signature(make_signature(CollKind::kAllReduce, DataType::kFloat32, 1024,
                                              ReduceOp::kSum, true, 0, false)),
            "all_reduce(float32 x 1024, sum)");
  EXPECT_EQ(describe_signature(make_signature(CollKind::kBroadcast, DataType::kInt8, 7,
                                              ReduceOp::kSum, false, 3, true)),
            "broadcast(int8 x 7, root 3)");
  EXPECT_EQ(describe_signature(make_signature(CollKind::kBarrier, DataType::kFloat32, 0,
                                              ReduceOp::kSum, false, 0, false)),
            "barrier()");
}

// Bit 63 (transport::kSigUnordered) says how the sender ran the operation, not what it
// is: never set by make_signature, ignored when comparing and describing.
TEST(SignatureTest, UnorderedBitIsNotPartOfTheSignature) {
  const std::uint64_t huge = make_signature(CollKind::kAllReduce, DataType::kUint8,
                                            (std::size_t{1} << 40) - 1, ReduceOp::kMax, true, 0,
                                            false);
  EXPECT_EQ(huge & transport::kSigUnordered, 0u);
  const std::uint64_t sig = make_signature(CollKind::kAllGather, DataType::kFloat32, 256,
                                           ReduceOp::kSum, false, 0, false);
  const std::uint64_t flagged = sig | transport::kSigUnordered;
  EXPECT_FALSE(transport::signatures_differ(sig, flagged));
  EXPECT_FALSE(transport::signatures_differ(0, flagged));
  EXPECT_TRUE(transport::signatures_differ(flagged, huge));
  EXPECT_EQ(describe_signature(flagged), "all_gather(float32 x 256)");
  // A later seq overtakes an earlier receive only when its sender ran in order.
  const transport::Tag earlier{3, 5, 0, sig};
  EXPECT_TRUE((transport::Tag{3, 6, 0, sig}).overtakes(earlier));
  EXPECT_FALSE((transport::Tag{3, 6, 0, flagged}).overtakes(earlier));
  EXPECT_FALSE((transport::Tag{4, 6, 0, sig}).overtakes(earlier));
  EXPECT_FALSE((transport::Tag{3, 5, 1, sig}).overtakes(earlier));
}

}  // namespace
}  // namespace chorus::op
