#include "cli/journal_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "common/text_escape.h"

namespace gfp::cli {
namespace {

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

Status OutOfRange(const std::string& text, const char* field, int value) {
  return InvalidArgument("\"" + EscapeControl(text) + "\" has " + field + " " +
                         std::to_string(value) + ", which is out of range");
}

}  // namespace

void PrintError(const Status& status) {
  std::cerr << "error: " << EscapeControl(status.message()) << "\n";
}

// errno of the first failed write seen (a later flush may have nothing left to fail on).
int first_output_errno = 0;

bool OutputFailed() {
  const bool failed = !std::cout.good() || std::ferror(stdout) != 0;
  if (failed && first_output_errno == 0) first_output_errno = errno;
  return failed;
}

int FinishOutput(int exit_code) {
  OutputFailed();  // keeps the errno of a write that already failed
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if (!flushed && first_output_errno == 0) first_output_errno = errno;
  if (flushed && !OutputFailed()) return exit_code;
  const int error = first_output_errno;
  std::cerr << "error: writing the output failed"
            << (error != 0 ? std::string(": ") + std::strerror(error) : std::string())
            << " (the output is incomplete)\n";
  return kExitDamaged;
}

Status CheckRfc3339Ranges(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6) {
    return Status::Ok();  // the format itself is checked (and worded) by the parser
  }
  if (month < 1 || month > 12) return OutOfRange(text, "month", month);
  if (day < 1 || day > DaysInMonth(year, month)) return OutOfRange(text, "day", day);
  if (hour > 23 || hour < 0) return OutOfRange(text, "hour", hour);
  if (minute > 59 || minute < 0) return OutOfRange(text, "minute", minute);
  if (second > 60 || second < 0) return OutOfRange(text, "second", second);
  const std::size_t offset = text.find_first_of("+-", static_cast<std::size_t>(consumed));
  int oh = 0, om = 0;
  if (offset != std::string::npos &&
      std::sscanf(text.c_str() + offset + 1, "%2d:%2d", &oh, &om) == 2) {
    if (oh > 23) return OutOfRange(text, "UTC offset hour", oh);
    if (om > 59) return OutOfRange(text, "UTC offset minute", om);
  }
  return Status::Ok();
}

}  // namespace gfp::cli
