// Output files are written to a temporary name beside the target and renamed
// into place, so a killed run never leaves a truncated file that looks complete.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace npusim {

// Writes `data` to `path` atomically: to temp_path(path), flushed to disk
// (fsync), then renamed over `path`; through a link, over the link's target
// (the link stays). A path that is neither a plain file nor a folder (a
// device such as /dev/null, a FIFO) is written in place, since renaming
// would replace it; one naming a descriptor of this process (/dev/stdout,
// /dev/fd/N, /proc/self/fd/N) is written through that descriptor, after
// what std::cout and stdio hold, as the shell's redirection opened it (a
// `>>` file is appended to, not truncated or replaced). Throws npusim::Error
// on failure.
void write_file_atomic(const std::string &path, const std::string &data);

// Where an output named `given` is written, by the rules above: renamed
// over `path` (a plain file, a new one, or a link's target), written in
// place at `path` (a device, a FIFO), or through this process's descriptor
// `fd` (/dev/stdout, /dev/fd/N, /proc/self/fd/N). Streamed outputs (traces)
// and the VCD follow it too.
struct OutputPlace {
    enum class How { rename, in_place, descriptor } how = How::rename;
    std::string path;
    int fd = -1;
};
OutputPlace output_place(const std::string &given);

// A stream on where `place` is written: its temporary (temp_path) for a
// renamed output, the path for one in place, a duplicate of the descriptor
// (after what std::cout, std::cerr and stdio hold). nullptr and errno when
// it cannot be opened.
FILE *open_place(const OutputPlace &place);

// Copies the file `from` to the output `given`, written as output_place says
// (a file made elsewhere, e.g. SystemC's VCD, for an output that is not
// renamed into place). Throws npusim::Error naming `given`.
void copy_to_output(const std::string &from, const std::string &given);

// The temporary an output is written to before its rename:
// `path`.tmp.TAG-PID, TAG a hash of this host, its boot and PID namespace
// (pid < 0: this process's).
std::string temp_path(const std::string &path, long pid = -1);

// Removes the temporaries of `path` (temp_path) of processes that no longer
// run (a run killed before its rename), this host's and PID namespace's
// only: those of running processes, and of shards elsewhere sharing the
// folder, are left alone. `suffix`: what the writer added to temp_path
// (SystemC's ".vcd").
void remove_stale_temps(const std::string &path, const std::string &suffix = "");

// Writes `text` to stdout for "-", else as write_file_atomic does.
void write_output(const std::string &path, const std::string &text);

// Reads a whole file. Throws npusim::Error naming the file on failure (a
// folder too: "PATH: cannot open: Is a directory").
std::string read_file(const std::string &path);

// A command's output files, checked before it does any work, so that exit 2
// leaves nothing written: `outputs` holds (flag, path) pairs ("" is skipped,
// and "-", stdout, for --json and --csv; for any other flag "-" throws: it
// would have made a file called "-"). Throws npusim::Error with the line writing would have
// given ("PATH: cannot write: No such file or directory") when a path's folder
// is missing or takes no files or the path is a folder, and
// "PATH: named by both --json and --trace (...)" when two name one file,
// however each is spelled (x.json, ./x.json, /abs/x.json, through a link, a
// hard link to it). `inputs` holds (what, path) pairs of files the command
// reads ("the input", PATH): an output naming one of them, however spelled,
// is "PATH: named by both the input and -o (an output cannot replace a file
// it is made from)".
void check_output_paths(const std::vector<std::pair<std::string, std::string>> &outputs,
                        const std::vector<std::pair<std::string, std::string>> &inputs = {});

// The second half of check_output_paths alone, for outputs whose folder a
// command makes later: an output replacing one of the inputs, however
// spelled, throws "PATH: named by both the spec and -o (an output cannot
// replace a file it is made from)". Inputs given as "" are skipped.
void check_inputs_kept(const std::vector<std::pair<std::string, std::string>> &outputs,
                       const std::vector<std::pair<std::string, std::string>> &inputs);

}  // namespace npusim
