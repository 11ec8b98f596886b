// Return-code names and version constants (the struct layouts are static_asserts in fm_abi.h).
#include "adapters/fm/fm_abi.h"

#include <gtest/gtest.h>

#include "adapters/fm/fm_return_codes.h"

namespace gfp::adapters::fm {
namespace {

TEST(FmAbi, EveryDocumentedCodeHasItsName) {
  const char* expected[] = {"FM_ST_SUCCESS",
                            "FM_ST_BADPARAM",
                            "FM_ST_GENERIC_ERROR",
                            "FM_ST_NOT_SUPPORTED",
                            "FM_ST_UNINITIALIZED",
                            "FM_ST_TIMEOUT",
                            "FM_ST_VERSION_MISMATCH",
                            "FM_ST_IN_USE",
                            "FM_ST_NOT_CONFIGURED",
                            "FM_ST_CONNECTION_NOT_VALID",
                            "FM_ST_NVLINK_ERROR",
                            "FM_ST_RESOURCE_BAD",
                            "FM_ST_RESOURCE_IN_USE",
                            "FM_ST_RESOURCE_NOT_IN_USE",
                            "FM_ST_RESOURCE_EXHAUSTED",
                            "FM_ST_RESOURCE_NOT_READY",
                            "FM_ST_PARTITION_EXISTS",
                            "FM_ST_PARTITION_ID_IN_USE",
                            "FM_ST_PARTITION_ID_NOT_IN_USE",
                            "FM_ST_PARTITION_NAME_IN_USE",
                            "FM_ST_PARTITION_NAME_NOT_IN_USE",
                            "FM_ST_PARTITION_ID_NAME_MISMATCH",
                            "FM_ST_NOT_READY",
                            "FM_ST_RESOURCE_USED_IN_THIS_PARTITION",
                            "FM_ST_RESOURCE_USED_IN_ANOTHER_PARTITION",
                            "FM_ST_PARTITION_MISWIRED_TRUNKS",
                            "FM_ST_PARTITION_INSUFFICIENT_TRUNKS",
                            "FM_ST_PARTITION_MISSING_SWITCHES",
                            "FM_ST_PARTITION_NETWORK_CONFIG_ERROR",
                            "FM_ST_PARTITION_ROUTE_PROGRAMMING_ERROR"};
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(FmReturnName(-i), expected[i]) << "code " << -i;
    EXPECT_FALSE(FmReturnDescription(-i).empty()) << "code " << -i;
  }
}

TEST(FmAbi, UnknownCodesAreNamedWithTheirNumber) {
  EXPECT_EQ(FmReturnName(-42), "FM_ST_UNKNOWN(-42)");
  EXPECT_EQ(FmReturnName(-30), "FM_ST_UNKNOWN(-30)");
  EXPECT_EQ(FmReturnName(1), "FM_ST_UNKNOWN(1)");
  EXPECT_EQ(FmReturnCategory(-42), ErrorCode::kInternal);
}

TEST(FmAbi, CategoriesTellRetryableFromFatal) {
  EXPECT_EQ(FmReturnCategory(abi::kSuccess), ErrorCode::kOk);
  EXPECT_EQ(FmReturnCategory(abi::kNotConfigured), ErrorCode::kUnavailable);
  EXPECT_EQ(FmReturnCategory(abi::kConnectionNotValid), ErrorCode::kUnavailable);
  EXPECT_EQ(FmReturnCategory(abi::kTimeout), ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(FmReturnCategory(abi::kBadParam), ErrorCode::kInvalidArgument);
  EXPECT_EQ(FmReturnCategory(abi::kInUse), ErrorCode::kFailedPrecondition);
}

TEST(FmAbi, VersionsEncodeSizeAndStructVersion) {
  EXPECT_EQ(abi::MakeParamVersion(268, 1), 0x0100010Cu);
  EXPECT_EQ(abi::kConnectParamsV2Version & 0xFFFFFFu, sizeof(abi::ConnectParamsV2));
  EXPECT_EQ(abi::kConnectParamsV2Version >> 24, 2u);
  EXPECT_EQ(abi::kFabricPartitionListVersion >> 24, 1u);  // the "v2" list uses version 1
}

}  // namespace
}  // namespace gfp::adapters::fm
