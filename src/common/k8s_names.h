// Kubernetes names, checked before they are used in file names, API paths or the journal. Each
// check returns an empty string when the value is valid, else why it is not ("is longer than 63
// characters"), for a message that also names the value.
#pragma once

#include <string>
#include <string_view>

namespace gfp {

// An RFC 1123 label: 1-63 of [a-z0-9-], starting and ending alphanumeric (namespaces, request
// names, pod claim names).
std::string DnsLabelProblem(std::string_view value);

// An RFC 1123 subdomain: 1-253 characters, dot-separated labels (object names); `max_length`
// narrows it (a DRA driver name is at most 63).
std::string DnsSubdomainProblem(std::string_view value, std::size_t max_length = 253);

// An object's metadata.uid as the API server writes it (a UUID): 1-64 of [A-Za-z0-9-]. Used in
// file names, so nothing else is accepted.
std::string UidProblem(std::string_view value);

}  // namespace gfp
