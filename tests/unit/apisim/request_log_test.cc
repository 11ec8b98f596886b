// The fake API server's request log: a request counts from its arrival, its code comes later.
#include "sim/apiserver/request_log.h"

#include <gtest/gtest.h>

namespace gfp::apisim {
namespace {

TEST(RequestLogTest, ARequestCountsFromItsArrivalAndGetsItsCodeWhenAnswered) {
  RequestLog log;
  const auto key = log.Begin({"get", "nodes", "/api/v1/nodes/n", 0, 40000});
  EXPECT_EQ(log.Count("get", "nodes"), 1);
  EXPECT_EQ(log.Records().at(0).code, 0);
  log.Finish(key, 200);
  EXPECT_EQ(log.Records().at(0).code, 200);
  EXPECT_EQ(log.Records().at(0).client_port, 40000);
}

TEST(RequestLogTest, FinishAfterAClearTouchesNoLaterRequest) {
  RequestLog log;
  const auto old = log.Begin({"get", "nodes", "/a", 0, 1});
  log.Clear();
  const auto fresh = log.Begin({"list", "resourceslices", "/b", 0, 2});
  log.Finish(old, 500);
  ASSERT_EQ(log.Records().size(), 1u);
  EXPECT_EQ(log.Records()[0].code, 0);
  log.Finish(fresh, 201);
  EXPECT_EQ(log.Records()[0].code, 201);
}

TEST(RequestLogTest, InterleavedAnswersFindTheirOwnRequests) {
  RequestLog log;
  const auto first = log.Begin({"watch", "resourceslices", "/w", 0, 1});
  const auto second = log.Begin({"get", "nodes", "/n", 0, 2});
  log.Finish(second, 404);
  log.Finish(first, 200);
  EXPECT_EQ(log.Records()[0].code, 200);
  EXPECT_EQ(log.Records()[1].code, 404);
}

}  // namespace
}  // namespace gfp::apisim
