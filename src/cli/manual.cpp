#include "cli/manual.hpp"

#include <algorithm>
#include <set>

#include "cli/exporter_options.hpp"

namespace testio::cli {
namespace {

// roff: a backslash and a hyphen escaped, and no line that starts with a control character.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
  return out;
}

std::string option_heading(const OptionHelp& option) {
  std::string heading;
  if (!option.short_name.empty()) heading += "\\fB\\-" + roff(option.short_name) + "\\fR, ";
  for (std::size_t i = 0; i < option.long_names.size(); ++i)
    heading += (i ? ", " : "") + std::string("\\fB\\-\\-") + roff(option.long_names[i]) + "\\fR";
  if (!option.arg_name.empty()) heading += " \\fI" + roff(option.arg_name) + "\\fR";
  return heading;
}

std::string option_entries(const OptionTable& options, const std::string& group) {
  std::string entries;
  for (const OptionHelp& option : options.group_help(group)) {
    entries += ".TP\n" + option_heading(option) + "\n" + roff(option.help);
    if (option.default_value) entries += " (default: " + roff(*option.default_value) + ")";
    entries += "\n";
  }
  return entries;
}

const char* const kExporter = R"(.SH EXPORTER
.B testio exporter
.RI [ options ]
serves Prometheus probes, as blackbox_exporter does: each
.I /probe?target=HOST[:PORT]&connections=N&time=SECONDS
(with
.IR reverse=1 ,
.IR bidir=1 ,
.IR udp=1 ,
.IR bitrate= ,
.IR length= ,
.I rr=1
or
.I iperf3=1
as it needs) runs that test as a client and answers with its metrics;
.I testio_up
is 0, with the reason as a label, when the test fails.
.I /metrics
holds the exporter's own counters. The metrics are listed in
.IR /usr/share/doc/testio/metrics.md .
)";

const char* const kPlot = R"(.SH PLOT
.B testio plot
.I REPORT.json
.RI [ REPORT.json ...]
.B \-o
.I OUT
.RI [ \-\-label " NAME" ]...
draws testio's JSON (a client's or a server's
.BR \-\-json ,
a
.B \-\-json\-stream
file, even one cut short,
.BR "\-\-mesh \-\-json" )
as OUT:
.I .png
or
.I .svg
with every plot one under another, or
.IR .html ,
one file that needs no network, with the test, the plots and the report's tables. Several
reports are overlaid. It runs python3 with matplotlib
.RB ( "apt-get install python3-matplotlib" );
see
.IR /usr/share/doc/testio/plots.md .
A campaign directory, or two, draws each cell's median with its 95% interval and the runs.
.SH CAMPAIGN AND COMPARE
.B testio campaign
.RB [ \-\-vary " NAME=V1,V2" ]...
.RB [ \-\-repeat " N" ]
.B \-o
.I DIR
.RI [ "testio options" ]
runs a grid of tests (each combination of the axes' values) once per round, keeps every run's
report in
.IR DIR/runs.jsonl ,
and gives each cell's median with its 95% interval;
.B \-\-resume
.I DIR
continues one that stopped.
.B testio compare
.I A B
says, cell by cell, whether B is faster, slower or no different from A;
.B \-\-fail\-if\-slower
.I PCT
exits 1 for a CI pipeline. Both run python3; see
.I /usr/share/doc/testio/campaigns.md
and
.IR compare.md .
)";

const char* const kDescription = R"(.SH DESCRIPTION
testio measures TCP and UDP bandwidth and latency between two hosts, in the family of iperf3,
iperf2 and neper.
.B testio \-s
serves tests on one host;
.B testio \-c
.I HOST N
on another opens N connections (or, with
.BR \-u ,
UDP flows) spread over worker threads on both sides, pushes data for a timed window (or a byte
count), counts every byte per connection on the receiver, and reports Gbit/s per interval and in
total, with the balance across connections, CPU per GB, system calls and bytes per call and the
sender's TCP_INFO, as a table or as JSON shaped like iperf3's.
.PP
It also runs request/response latency tests
.RB ( \-\-rr ),
connection-per-transfer downloads from a testio server or any HTTP server
.RB ( \-\-transfers ,
.BI \-c " URL"\fR),
a raw sink any nc can send a file to
.RB ( \-\-raw ),
and speaks iperf3's protocol both ways: stock iperf3 clients against
.BR "testio \-s" ,
and
.B testio \-c \-\-iperf3
against a stock iperf3 server.
.PP
A server runs
.B \-\-max\-tests
tests at once (default 1) and queues up to
.B \-\-queue
more (default 16): a waiting client says how many tests are ahead and starts in its turn, for up to
.B \-\-max\-wait
seconds. Each line of the server's report begins with the test's number and peer, as
.IR "[#7 192.0.2.5:41234]" .
Both sides say they are alive every second; a peer silent for
.B \-\-stall\-timeout
seconds (default 10) has stopped, and its test ends on both sides.
)";

const char* const kTail = R"(.SH EXIT STATUS
0 when the test ran and every count agreed; 1 for a runtime error (a refused connection, a failed
transfer, mismatched counts, a signal); 2 for a usage error. Every error is one sentence on
stderr; stdout carries only the report.
.SH EXAMPLES
.nf
testio \-s
testio \-s \-\-max\-tests 64 \-\-max\-tests\-per\-peer 2
testio \-c server.example 32 \-t 30
testio \-c server.example 8 \-R \-\-json
testio \-c server.example \-u 8 \-b 1G
testio \-c server.example 10 \-\-rr \-\-msize 1K \-\-num 10000
testio \-c 'http://minio:9000/files/{i}.pdf' 100 \-\-transfers 1000 \-\-save /data/dl
iperf3 \-c testio\-host \-P 8
.fi
.SH FILES
.I /usr/share/doc/testio
holds the documentation: the architecture, the JSON schema, the protocol, security, tuning and
the benchmarks.
.SH SEE ALSO
.BR iperf3 (1),
.BR iperf (1),
.BR curl (1)
)";

}  // namespace

std::vector<std::string> help_groups(const OptionTable& options) {
  // From the general to the specific; a group not named here (a new workload's) follows them in
  // the order it was added, so none is ever left out of --help.
  static const std::vector<std::string> ordered = {
      "General", "Server", "Client", "Tuning", "UDP", "Request/response", "Transfers", "Raw TCP",
      "Latency under load", "Responsiveness (RPM)", "Metrics", "Mesh", "Limits and security", "iperf3"};
  static const std::vector<std::string> hidden = {"Packaging", "Positional", "iperf3 (refused)", ""};
  const std::vector<std::string> present = options.groups();
  auto has = [](const std::vector<std::string>& list, const std::string& group) {
    return std::find(list.begin(), list.end(), group) != list.end();
  };
  std::vector<std::string> shown;
  for (const std::string& group : ordered)
    if (has(present, group)) shown.push_back(group);
  for (const std::string& group : present)
    if (!has(ordered, group) && !has(hidden, group)) shown.push_back(group);
  return shown;
}

std::string man_page(const OptionTable& options) {
  std::string page = ".TH TESTIO 1 \"\" \"testio " TESTIO_VERSION "\" \"User Commands\"\n";
  page += ".SH NAME\ntestio \\- multi\\-connection TCP and UDP bandwidth and latency tester\n";
  page += ".SH SYNOPSIS\n.B testio \\-s\n.RI [ options ]\n.br\n.B testio \\-c\n.I HOST\n.RI [ options ] \" \" [ N ]\n"
          ".br\n.B testio exporter\n.RI [ options ]\n.br\n.B testio plot\n.I REPORT.json\n.B \\-o\n.I OUT\n"
          ".br\n.B testio campaign\n.RI [ options ]\n.B \\-o\n.I DIR\n.br\n.B testio compare\n.I A B\n";
  page += kDescription;
  page += ".SH OPTIONS\n";
  for (const std::string& group : help_groups(options)) {
    page += ".SS " + roff(group) + " options\n";
    page += option_entries(options, group);
  }
  page += kExporter;
  page += option_entries(exporter_options(), "Exporter");
  page += kPlot;
  return page + kTail;
}

namespace {

void add_words(const OptionTable& options, const std::vector<std::string>& groups, std::set<std::string>& words,
               std::set<std::string>& file_options) {
  for (const std::string& group : groups)
    for (const OptionHelp& option : options.group_help(group)) {
      const bool takes_file = option.arg_name == "FILE" || option.arg_name == "DIR";
      for (const std::string& name : option.long_names) {
        words.insert("--" + name);
        if (takes_file) file_options.insert("--" + name);
      }
      if (!option.short_name.empty()) {
        words.insert("-" + option.short_name);
        if (takes_file) file_options.insert("-" + option.short_name);
      }
    }
}

}  // namespace

std::string bash_completion(const OptionTable& options) {
  // `testio plot`'s words (its options are the Python program's own, src/python/testio_plot/command.py).
  std::set<std::string> words{"exporter", "plot", "campaign", "compare", "--output", "--label", "--title"},
      file_options{"--output"};
  add_words(options, help_groups(options), words, file_options);
  add_words(exporter_options(), {"Exporter"}, words, file_options);
  std::string all, files;
  for (const std::string& word : words) all += (all.empty() ? "" : " ") + word;
  for (const std::string& word : file_options) files += (files.empty() ? "" : "|") + word;
  return "# bash completion for testio, made by `testio --bash-completion` from its option table\n"
         "_testio() {\n"
         "  local current=${COMP_WORDS[COMP_CWORD]} previous=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  case $previous in\n"
         "    " + files + ")\n"
         "      COMPREPLY=($(compgen -f -- \"$current\"))\n"
         "      return ;;\n"
         "  esac\n"
         "  COMPREPLY=($(compgen -W \"" + all + "\" -- \"$current\"))\n"
         "}\n"
         "complete -o default -F _testio testio\n";
}

}  // namespace testio::cli
