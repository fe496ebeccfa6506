#include "cli/manual.hpp"

#include <set>

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

std::string option_heading(const cxxopts::HelpOptionDetails& option) {
  std::string heading;
  if (!option.s.empty()) heading += "\\fB\\-" + roff(option.s) + "\\fR, ";
  for (std::size_t i = 0; i < option.l.size(); ++i)
    heading += (i ? ", " : "") + std::string("\\fB\\-\\-") + roff(option.l[i]) + "\\fR";
  if (!option.is_boolean && !option.arg_help.empty()) heading += " \\fI" + roff(option.arg_help) + "\\fR";
  return heading;
}

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
)";

const char* const kTail = R"(.SH EXIT STATUS
0 when the test ran and every count agreed; 1 for a runtime error (a refused connection, a failed
transfer, mismatched counts, a signal); 2 for a usage error. Every error is one sentence on
stderr; stdout carries only the report.
.SH EXAMPLES
.nf
testio \-s
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

const std::vector<std::string>& help_groups() {
  static const std::vector<std::string> groups = {"General", "Server", "Client", "Tuning", "UDP",
                                                  "Request/response", "Transfers", "Raw TCP",
                                                  "Limits and security"};
  return groups;
}

std::string man_page(const cxxopts::Options& options) {
  std::string page = ".TH TESTIO 1 \"\" \"testio " TESTIO_VERSION "\" \"User Commands\"\n";
  page += ".SH NAME\ntestio \\- multi\\-connection TCP and UDP bandwidth and latency tester\n";
  page += ".SH SYNOPSIS\n.B testio \\-s\n.RI [ options ]\n.br\n.B testio \\-c\n.I HOST\n.RI [ options ] \" \" [ N ]\n";
  page += kDescription;
  page += ".SH OPTIONS\n";
  for (const std::string& group : help_groups()) {
    page += ".SS " + roff(group) + " options\n";
    for (const cxxopts::HelpOptionDetails& option : options.group_help(group).options) {
      page += ".TP\n" + option_heading(option) + "\n" + roff(option.desc);
      if (option.has_default && !option.is_boolean) page += " (default: " + roff(option.default_value) + ")";
      page += "\n";
    }
  }
  return page + kTail;
}

std::string bash_completion(const cxxopts::Options& options) {
  std::set<std::string> words, file_options;
  for (const std::string& group : help_groups())
    for (const cxxopts::HelpOptionDetails& option : options.group_help(group).options) {
      for (const std::string& name : option.l) {
        words.insert("--" + name);
        if (option.arg_help == "FILE" || option.arg_help == "DIR") file_options.insert("--" + name);
      }
      if (!option.s.empty()) {
        words.insert("-" + option.s);
        if (option.arg_help == "FILE" || option.arg_help == "DIR") file_options.insert("-" + option.s);
      }
    }
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
