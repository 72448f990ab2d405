// Tests of operation signature packing and printing.
#include "algo/signature.h"

#include <gtest/gtest.h>

namespace chorus::algo {
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

}  // namespace
}  // namespace chorus::algo
