// Files an attacker or an accident could put where the kubeconfig is expected: every one is
// refused with a message, none blocks, none crashes, none is read past the cap.
#include <sys/stat.h>

#include "adapters/apiserver/kubeconfig.h"
#include "unit/apiserver/apiserver_fixture.h"

namespace gfp::adapters::apiserver {
namespace {

using testing::ErrorOf;
using ::testing::HasSubstr;
using testing::KubeconfigText;
using ::testing::StartsWith;
using testing::WithoutBlockingOn;

class KubeconfigHostile : public ::testing::Test {
 protected:
  std::string ErrorOfFile(const std::filesystem::path& path) {
    const Result<ApiServerConfig> config = LoadKubeconfig(path);
    EXPECT_FALSE(config.ok());
    const std::string message = ErrorOf(config);
    EXPECT_THAT(message, StartsWith("kubeconfig " + path.string()));
    return message;
  }
  std::string ErrorOfText(const std::string& text) {
    return ErrorOfFile(dir_.Write("config", text));
  }
  gfp::testing::TempDir dir_;
};

TEST_F(KubeconfigHostile, EmptyAndOneByte) {
  EXPECT_THAT(ErrorOfText(""), HasSubstr(": is empty"));
  EXPECT_THAT(ErrorOfText("\n"), HasSubstr(": is empty"));
  EXPECT_THAT(ErrorOfText("x"), HasSubstr(": is not a YAML mapping (it is text)"));
  EXPECT_THAT(ErrorOfText("["), HasSubstr(": is not YAML: "));
}

TEST_F(KubeconfigHostile, InvalidYaml) {
  EXPECT_THAT(ErrorOfText("clusters: [a, b\ncontexts: {"), HasSubstr(": is not YAML: "));
  EXPECT_THAT(ErrorOfText("a: b\n  c: d\n e"), HasSubstr(": is not YAML: "));
  EXPECT_THAT(ErrorOfText(std::string("\0\xff\xfe garbage\x01", 13)), HasSubstr("kubeconfig "));
}

TEST_F(KubeconfigHostile, DocumentThatIsAListOrAScalar) {
  EXPECT_THAT(ErrorOfText("- a\n- b\n"), HasSubstr(": is not a YAML mapping (it is a list)"));
  EXPECT_THAT(ErrorOfText("just some text\n"), HasSubstr(": is not a YAML mapping (it is text)"));
}

TEST_F(KubeconfigHostile, WrongTypes) {
  EXPECT_THAT(ErrorOfText("current-context: main\nclusters: 5\n"),
              HasSubstr(": clusters is text, not a list"));
  EXPECT_THAT(ErrorOfText("users: {a: 1}\n"), HasSubstr(": users is a map, not a list"));
  EXPECT_THAT(ErrorOfText("contexts: [5]\n"), HasSubstr(": contexts[0] is text, not a map"));
  EXPECT_THAT(ErrorOfText("users: [{user: {}}]\n"), HasSubstr(": users[0] has no name"));
  EXPECT_THAT(ErrorOfText("users: [{name: [a]}]\n"),
              HasSubstr(": users[0].name is a list, not text"));
  EXPECT_THAT(ErrorOfText("users: [{name: u, user: 5}]\n"),
              HasSubstr(": user \"u\" is text, not a map"));
  EXPECT_THAT(ErrorOfText("current-context: [a]\n"),
              HasSubstr(": current-context is a list, not text"));
  KubeconfigText text;
  text.user = "token: [a, b]";
  EXPECT_THAT(ErrorOfText(text.Render()), HasSubstr("user \"u1\" has token as a list, not text"));
  text.user = "tokenFile: {a: b}";
  EXPECT_THAT(ErrorOfText(text.Render()), HasSubstr("user \"u1\" has tokenFile as a map"));
}

TEST_F(KubeconfigHostile, AmbiguousDuplicates) {
  EXPECT_THAT(ErrorOfText("users: [{name: u, user: {}}, {name: u, user: {}}]\n"),
              HasSubstr(": two users named \"u\""));
  KubeconfigText text;
  text.user = "token: one\ntoken: two";
  EXPECT_THAT(ErrorOfText(text.Render()), HasSubstr("user \"u1\" gives \"token\" twice"));
  EXPECT_THAT(ErrorOfText(text.Render() + "users: []\n"), HasSubstr(": gives \"users\" twice"));
}

TEST_F(KubeconfigHostile, FifoDoesNotBlock) {
  const auto fifo = dir_.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(WithoutBlockingOn(fifo, [&] { return ErrorOf(LoadKubeconfig(fifo)); }),
              HasSubstr("cannot be read: not a regular file (a FIFO)"));
}

TEST_F(KubeconfigHostile, FifoAsReferencedFileDoesNotBlock) {
  const auto fifo = dir_.path() / "ca-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  KubeconfigText text;
  text.cluster = "server: https://a\ncertificate-authority: " + fifo.string();
  EXPECT_THAT(WithoutBlockingOn(fifo, [&] { return ErrorOfText(text.Render()); }),
              HasSubstr("cluster \"c1\": certificate-authority " + fifo.string() +
                        " cannot be read: not a regular file (a FIFO)"));
}

TEST_F(KubeconfigHostile, SymlinkToAFolder) {
  std::filesystem::create_directories(dir_.path() / "folder");
  const auto link = dir_.path() / "config-link";
  std::filesystem::create_directory_symlink(dir_.path() / "folder", link);
  EXPECT_THAT(ErrorOfFile(link), HasSubstr("cannot be read: not a regular file (a directory)"));
  EXPECT_THAT(ErrorOfFile(dir_.path() / "folder"), HasSubstr("not a regular file (a directory)"));
}

TEST_F(KubeconfigHostile, SymlinkToARegularFileIsFollowed) {
  const auto real = dir_.Write("real-config", KubeconfigText{}.Render());
  const auto link = dir_.path() / "config-link";
  std::filesystem::create_symlink(real, link);
  EXPECT_TRUE(LoadKubeconfig(link).ok());
}

TEST_F(KubeconfigHostile, CharacterDeviceIsRefused) {
  EXPECT_THAT(ErrorOfFile("/dev/zero"), HasSubstr("not a regular file (a character device)"));
}

TEST_F(KubeconfigHostile, HugeFileIsRefusedNotRead) {
  const auto huge = dir_.path() / "huge";
  { std::ofstream out(huge); }
  std::filesystem::resize_file(huge, 8ULL * 1024 * 1024 * 1024);  // sparse: 8 GiB of zeros
  EXPECT_THAT(ErrorOfFile(huge), HasSubstr("cannot be read: file is larger than 1048576 bytes"));
  // Just over the cap, with text a parser would take.
  std::string text = KubeconfigText{}.Render() + "# " + std::string(kMaxKubeconfigBytes, 'x');
  EXPECT_THAT(ErrorOfText(text), HasSubstr("file is larger than 1048576 bytes"));
}

TEST_F(KubeconfigHostile, HugeReferencedFileIsRefused) {
  const auto huge = dir_.path() / "huge-ca";
  { std::ofstream out(huge); }
  std::filesystem::resize_file(huge, 64ULL * 1024 * 1024);
  KubeconfigText text;
  text.cluster = "server: https://a\ncertificate-authority: " + huge.string();
  EXPECT_THAT(ErrorOfText(text.Render()),
              HasSubstr("certificate-authority " + huge.string() +
                        " cannot be read: file is larger than 1048576 bytes"));
}

TEST_F(KubeconfigHostile, DeepNestingAndAliasesDoNotCrash) {
  const std::size_t depth = 200000;
  EXPECT_THAT(ErrorOfText(std::string(depth, '[') + std::string(depth, ']')),
              HasSubstr(": is not YAML: "));
  // Each level refers to the one before ten times: a walk would take 10^20 steps.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 20; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 0; k < 9; ++k) bomb += ", " + prev;
    bomb += "]\n";
  }
  bomb += "users: *a20\n";
  EXPECT_THAT(ErrorOfText(bomb), HasSubstr(": users[0] is a list, not a map"));
}

}  // namespace
}  // namespace gfp::adapters::apiserver
