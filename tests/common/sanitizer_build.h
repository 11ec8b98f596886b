// Whether this test binary is built with AddressSanitizer or ThreadSanitizer (GCC defines
// __SANITIZE_*__, clang answers __has_feature): such builds run 5-10x slower and hold memory in
// shadow and quarantine, so suites shrink their default sizes and skip RSS bounds there.
#pragma once

namespace gfp::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

// ThreadSanitizer alone (it intercepts _exit and reports threads a process leaves running).
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizerBuild = true;
#else
inline constexpr bool kThreadSanitizerBuild = false;
#endif
#else
inline constexpr bool kThreadSanitizerBuild = false;
#endif

}  // namespace gfp::testing
