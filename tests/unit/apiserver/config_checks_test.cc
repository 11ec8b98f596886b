#include "adapters/apiserver/config_checks.h"

#include "adapters/apiserver/api_config.h"
#include "unit/apiserver/apiserver_fixture.h"

namespace gfp::adapters::apiserver {
namespace {

using testing::ErrorOf;
using ::testing::HasSubstr;

TEST(CheckServerUrl, AcceptsHttpsAndDropsTrailingSlashes) {
  EXPECT_EQ(*CheckServerUrl("https://api.example:6443"), "https://api.example:6443");
  EXPECT_EQ(*CheckServerUrl("https://10.0.0.1/"), "https://10.0.0.1");
  EXPECT_EQ(*CheckServerUrl("HTTPS://[fd00::1]:443/prefix//"), "https://[fd00::1]:443/prefix");
}

TEST(CheckServerUrl, RefusesWhatIsNotAnHttpsUrlWithAHost) {
  EXPECT_THAT(ErrorOf(CheckServerUrl("http://api.example")),
              HasSubstr("server \"http://api.example\" is not https"));
  EXPECT_THAT(ErrorOf(CheckServerUrl("api.example:6443")), HasSubstr("is not an https:// URL"));
  EXPECT_THAT(ErrorOf(CheckServerUrl("https://")), HasSubstr("has no host"));
  EXPECT_THAT(ErrorOf(CheckServerUrl("https:///path")), HasSubstr("has no host"));
  EXPECT_THAT(ErrorOf(CheckServerUrl("https://me:pw@api")), HasSubstr("holds a user name"));
  EXPECT_THAT(ErrorOf(CheckServerUrl("https://api?x=1")), HasSubstr("query or fragment"));
  EXPECT_THAT(ErrorOf(CheckServerUrl("https://api\r\nX-Evil: 1")),
              HasSubstr("server \"https://api\\r\\nX-Evil: 1\" holds a space, a control"));
}

TEST(CheckBearerToken, RefusesEmptyAndHeaderBreakingTokensWithoutQuotingThem) {
  EXPECT_TRUE(CheckBearerToken("eyJhbGciOi.J9-_x", "token").ok());
  EXPECT_THAT(CheckBearerToken("", "token").message(), HasSubstr("token is empty"));
  const Status newline = CheckBearerToken("secret\r\nX-Evil: 1", "token");
  EXPECT_THAT(newline.message(), HasSubstr("cannot be sent in an HTTP header (at byte 6)"));
  EXPECT_THAT(newline.message(), ::testing::Not(HasSubstr("secret")));
}

TEST(CheckPem, LooksForTheArmour) {
  EXPECT_TRUE(CheckCertificatePem(testing::kCaPem, "the CA").ok());
  EXPECT_THAT(CheckCertificatePem("MIIB...", "the CA").message(),
              HasSubstr("the CA holds no PEM certificate"));
  EXPECT_TRUE(CheckPrivateKeyPem(testing::kClientKeyPem, "the key").ok());
  EXPECT_TRUE(CheckPrivateKeyPem("-----BEGIN PRIVATE KEY-----\nx\n", "the key").ok());
  EXPECT_THAT(CheckPrivateKeyPem(testing::kCaPem, "the key").message(),
              HasSubstr("the key holds no PEM private key"));
}

TEST(CheckTlsServerName, AcceptsNamesAndAddresses) {
  EXPECT_TRUE(CheckTlsServerName("kubernetes.default.svc").ok());
  EXPECT_TRUE(CheckTlsServerName("fd00::1").ok());
  EXPECT_THAT(CheckTlsServerName("a b").message(),
              HasSubstr("tls-server-name \"a b\" is not a host name"));
}

TEST(AuthKindName, NamesEveryKind) {
  EXPECT_STREQ(AuthKindName(AuthKind::kBearerToken), "a bearer token");
  EXPECT_STREQ(AuthKindName(AuthKind::kTokenFile), "a token file");
  EXPECT_STREQ(AuthKindName(AuthKind::kClientCertificate), "a client certificate");
}

}  // namespace
}  // namespace gfp::adapters::apiserver
