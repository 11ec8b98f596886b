// The pure parts of the API server client: the backoff schedule, watch-line framing, watch
// event parsing, answers that are not JSON, the tls-server-name route.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "adapters/apiserver/api_call.h"
#include "adapters/apiserver/backoff.h"
#include "adapters/apiserver/server_url.h"
#include "adapters/apiserver/watch_event.h"

namespace gfp::adapters::apiserver {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DoublesFromTheBaseUpToTheCapWithTheWholeDelayAtTheTopOfTheJitter) {
  const BackoffPolicy policy{milliseconds(200), milliseconds(5000)};
  std::vector<long long> delays;
  for (int failures = 1; failures <= 7; ++failures) {
    delays.push_back(BackoffDelay(policy, failures, 0.999999).count());
  }
  EXPECT_EQ(delays, (std::vector<long long>{199, 399, 799, 1599, 3199, 4999, 4999}));
}

TEST(Backoff, JitterScalesBetweenHalfAndAllOfTheDelay) {
  const BackoffPolicy policy{milliseconds(200), milliseconds(5000)};
  EXPECT_EQ(BackoffDelay(policy, 3, 0.0).count(), 400);
  EXPECT_EQ(BackoffDelay(policy, 3, 0.5).count(), 600);
  EXPECT_EQ(BackoffDelay(policy, 100000, 0.0).count(), 2500);  // no overflow far past the cap
}

std::vector<std::string> Frame(WatchLineFramer& framer, const std::vector<std::string>& chunks,
                               Status* error = nullptr) {
  std::vector<std::string> lines;
  for (const auto& chunk : chunks) {
    auto fed = framer.Feed(chunk, [&](std::string_view line) {
      lines.emplace_back(line);
      return true;
    });
    if (!fed.ok()) {
      if (error != nullptr) *error = fed.status();
      break;
    }
  }
  return lines;
}

TEST(WatchLineFramer, JoinsLinesSplitAcrossChunksAndSkipsEmptyOnes) {
  WatchLineFramer framer(100);
  EXPECT_EQ(Frame(framer, {"{\"a\"", ":1}\n\n{\"b\":2}\r\n{\"c\"", ":3}\n"}),
            (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
  EXPECT_EQ(framer.pending_bytes(), 0u);
}

TEST(WatchLineFramer, RefusesALineLongerThanTheCapEvenWithoutANewline) {
  WatchLineFramer framer(10);
  Status error;
  EXPECT_EQ(Frame(framer, {"0123456789\n", "01234", "567890"}, &error),
            (std::vector<std::string>{"0123456789"}));
  EXPECT_EQ(error.code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(error.message().find("10-byte limit"), std::string::npos) << error.message();
}

TEST(WatchLineFramer, StopsWhenTheConsumerSaysSo) {
  WatchLineFramer framer(100);
  int seen = 0;
  auto fed = framer.Feed("a\nb\nc\n", [&](std::string_view) { return ++seen < 2; });
  ASSERT_TRUE(fed.ok());
  EXPECT_FALSE(*fed);
  EXPECT_EQ(seen, 2);
}

TEST(ParseWatchEvent, ReadsTypeAndObjectAndTheCodeOfAnError) {
  auto event = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
  ASSERT_TRUE(event.ok()) << event.status().message();
  EXPECT_EQ(event->type, "ERROR");
  EXPECT_EQ(WatchErrorCode(*event), 410);
  auto added = ParseWatchEvent(R"({"type":"ADDED","object":{"metadata":{"name":"x"}}})");
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(WatchErrorCode(*added), 0);
}

TEST(ParseWatchEvent, RefusesGarbageAndEventsWithoutTypeOrObject) {
  for (const char* line : {"not json", "[1,2]", R"({"object":{}})", R"({"type":"ADDED"})",
                           R"({"type":"ADDED","object":"x"})", R"({"type":"","object":{}})"}) {
    auto event = ParseWatchEvent(line);
    ASSERT_FALSE(event.ok()) << line;
    EXPECT_EQ(event.status().code(), ErrorCode::kDataLoss) << line;
  }
}

TEST(ApiAnswer, GarbageIsAnErrorNamingTheRequestNotAnException) {
  ApiAnswer answer{200, "<html>proxy error", "get resourceclaims"};
  auto json = answer.Json();
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().message(),
            "the API server's answer to get resourceclaims (HTTP 200, 17 bytes) is not JSON");
  EXPECT_TRUE((ApiAnswer{404, R"({"kind":"Status"})", "x"}).Json().ok());
}

TEST(VerbName, SpellsVerbsAsRbacDoes) {
  EXPECT_STREQ(VerbName(Verb::kGet), "get");
  EXPECT_STREQ(VerbName(Verb::kList), "list");
  EXPECT_STREQ(VerbName(Verb::kWatch), "watch");
  EXPECT_STREQ(VerbName(Verb::kCreate), "create");
  EXPECT_STREQ(VerbName(Verb::kUpdate), "update");
  EXPECT_STREQ(VerbName(Verb::kPatch), "patch");
  EXPECT_STREQ(VerbName(Verb::kDelete), "delete");
  EXPECT_STREQ(HttpMethod(Verb::kUpdate), "PUT");
  EXPECT_STREQ(HttpMethod(Verb::kCreate), "POST");
}

TEST(RouteTo, AddressesTheTlsServerNameAndConnectsToTheServersHost) {
  auto plain = RouteTo("https://10.0.0.1:6443", "");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->url_base, "https://10.0.0.1:6443");
  EXPECT_EQ(plain->connect_to, "");
  auto named = RouteTo("https://10.0.0.1:6443/prefix", "kubernetes.default.svc");
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_EQ(named->url_base, "https://kubernetes.default.svc:6443/prefix");
  EXPECT_EQ(named->connect_to, "kubernetes.default.svc:6443:10.0.0.1:6443");
  auto default_port = RouteTo("https://api.example", "other.example");
  ASSERT_TRUE(default_port.ok());
  EXPECT_EQ(default_port->connect_to, "other.example:443:api.example:443");
}

TEST(EscapeQueryValue, PercentEncodesSelectorCharacters) {
  EXPECT_EQ(EscapeQueryValue("spec.nodeName=node-1"), "spec.nodeName%3Dnode-1");
  EXPECT_EQ(EscapeQueryValue("a,b c"), "a%2Cb%20c");
}

}  // namespace
}  // namespace gfp::adapters::apiserver
