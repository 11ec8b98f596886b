#include "store/hash_chain.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <limits>

namespace gfp::store {
namespace {

void PutU64BigEndian(std::uint64_t v, std::uint8_t* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<std::uint8_t>(v & 0xffU);
    v >>= 8;
  }
}

void PutU32BigEndian(std::uint32_t v, std::uint8_t* out) {
  for (int i = 3; i >= 0; --i) {
    out[i] = static_cast<std::uint8_t>(v & 0xffU);
    v >>= 8;
  }
}

std::string_view AsView(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

std::string OpenSslError(const char* what) {
  char buf[256] = {};
  ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
  return std::string("SHA-256 ") + what + " failed: " + buf;
}

}  // namespace

struct ChainHasher::State {
  EVP_MD* md = nullptr;
  EVP_MD_CTX* ctx = nullptr;
  ~State() {
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
  }
};

ChainHasher::ChainHasher(std::unique_ptr<State> state) : state_(std::move(state)) {}
ChainHasher::ChainHasher(ChainHasher&&) noexcept = default;
ChainHasher& ChainHasher::operator=(ChainHasher&&) noexcept = default;
ChainHasher::~ChainHasher() = default;

Result<ChainHasher> ChainHasher::Create() {
  auto state = std::make_unique<State>();
  // Fetch the implementation once: an implicit fetch on every init costs a provider lookup.
  state->md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (state->md == nullptr) return Internal(OpenSslError("fetch"));
  state->ctx = EVP_MD_CTX_new();
  if (state->ctx == nullptr) return Internal(OpenSslError("context allocation"));
  return ChainHasher(std::move(state));
}

Result<Hash> ChainHasher::Digest(std::string_view header, std::string_view part1,
                                 std::string_view part2) {
  Hash out{};
  unsigned int len = 0;
  EVP_MD_CTX* ctx = state_->ctx;
  if (EVP_DigestInit_ex(ctx, state_->md, nullptr) != 1 ||
      EVP_DigestUpdate(ctx, header.data(), header.size()) != 1 ||
      EVP_DigestUpdate(ctx, part1.data(), part1.size()) != 1 ||
      EVP_DigestUpdate(ctx, part2.data(), part2.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, out.data(), &len) != 1) {
    return Internal(OpenSslError("digest"));
  }
  if (len != out.size())
    return Internal("SHA-256 digest has unexpected length " + std::to_string(len));
  return out;
}

Result<Hash> ChainHasher::EventHash(const Hash& prev_hash, std::uint64_t seq,
                                    std::int64_t time_unix_micros, std::string_view type,
                                    std::string_view payload) {
  if (type.size() > std::numeric_limits<std::uint32_t>::max()) {
    return InvalidArgument("event type name of " + std::to_string(type.size()) +
                           " bytes is longer than 2^32-1");
  }
  std::array<std::uint8_t, 32 + 8 + 8 + 4> header{};
  std::memcpy(header.data(), prev_hash.data(), prev_hash.size());
  PutU64BigEndian(seq, header.data() + 32);
  // Two's complement: the same bit pattern as the signed value, in big-endian order.
  PutU64BigEndian(static_cast<std::uint64_t>(time_unix_micros), header.data() + 40);
  PutU32BigEndian(static_cast<std::uint32_t>(type.size()), header.data() + 48);
  return Digest(AsView(header.data(), header.size()), type, payload);
}

Result<Hash> ChainHasher::SnapshotHash(std::uint64_t seq, const Hash& event_hash,
                                       std::int64_t created_time_unix_micros,
                                       std::string_view payload) {
  std::array<std::uint8_t, 8 + 32 + 8> header{};
  PutU64BigEndian(seq, header.data());
  std::memcpy(header.data() + 8, event_hash.data(), event_hash.size());
  PutU64BigEndian(static_cast<std::uint64_t>(created_time_unix_micros), header.data() + 40);
  return Digest(AsView(header.data(), header.size()), {}, payload);
}

std::string HashToHex(const Hash& hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(hash.size() * 2);
  for (std::uint8_t b : hash) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

std::string ShortHex(const Hash& hash) { return HashToHex(hash).substr(0, 16); }

}  // namespace gfp::store
