// The API server's error answers: `Status` objects as a real kube-apiserver sends them
// ({"kind":"Status","apiVersion":"v1","status":"Failure","message":...,"reason":...,"code":...}).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gfp::apisim {

// The reason a real API server gives for `code` ("NotFound" for 404, "Conflict" for 409, …).
const char* ReasonFor(int code);

// A Failure Status; `details` (name, group, kind) is added when `name` is not empty.
nlohmann::json StatusObject(int code, const std::string& message, const std::string& name = "",
                            const std::string& resource = "");

// "resourceslices.resource.k8s.io \"x\" not found", as kube-apiserver words it.
nlohmann::json NotFoundStatus(const std::string& resource, const std::string& name);

// The HTTP reason phrase for the status line.
const char* HttpReason(int code);

}  // namespace gfp::apisim
