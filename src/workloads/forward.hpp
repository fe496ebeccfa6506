// The names a workload's header hands along, declared only, so that including a workload's header
// does not pull in the config, the option table, the report or the Workload interface (and Asio
// through them); the workload's .cpp files include what they use.
#pragma once

namespace testio::config {
struct Config;
}  // namespace testio::config

namespace testio::options {
struct GivenOptions;
class OptionTable;
class ParsedOptions;
}  // namespace testio::options

namespace testio::report {
class Section;
struct TestReport;
}  // namespace testio::report

namespace testio::spec {
struct TestSpec;
}  // namespace testio::spec

namespace testio::util {
class MappedFile;
}  // namespace testio::util

namespace testio::workloads {
enum class Side;
class TestSide;
class Workload;
}  // namespace testio::workloads
