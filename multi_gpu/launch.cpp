#include "launch.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

namespace {

// ---------------------------------------------------------------- parsing helpers

std::size_t count_in_range(const std::string& option, const std::string& text, std::size_t lo, const char* what) {
    const auto count = parse_count(text);
    if (!count || *count < lo || *count > kMaxElements) {
        throw UsageError(option + " takes " + what + " from " + std::to_string(lo) + " to 2^" +
                         std::to_string(kMaxLog2Elements) + " (a whole number or 2^K), not '" + text + "'");
    }
    return *count;
}

// ---------------------------------------------------------------- the launchers' variables

// A rank or a size from the environment: a whole number, or a UsageError naming the variable.
std::optional<int> env_int(const Environment& env, const char* name, int lo) {
    const char* text = env(name);
    if (!text) return std::nullopt;
    const auto value = parse_integer<long long>(text);
    if (!value || *value < lo || *value > 1 << 24) {
        throw UsageError(std::string("the environment variable ") + name + " is '" + text +
                         "', not a whole number from " + std::to_string(lo));
    }
    return static_cast<int>(*value);
}

struct Launcher {
    const char* name;         // for the header: "Open MPI"
    const char* rank;         // variable with this process's rank
    const char* sizes[2];     // variables with the job's size, the first one set wins
    const char* local_rank;   // variable with its rank on this machine
};

// Slurm: SLURM_NTASKS is the job's task count, set also in a batch script that runs the
// program directly as a single process; SLURM_STEP_NUM_TASKS is set by srun for the step
// it launches, so it comes first.
constexpr Launcher kLaunchers[] = {
    {"Open MPI", "OMPI_COMM_WORLD_RANK", {"OMPI_COMM_WORLD_SIZE", nullptr}, "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"MPICH/Hydra", "PMI_RANK", {"PMI_SIZE", nullptr}, "MPI_LOCALRANKID"},
    {"Slurm", "SLURM_PROCID", {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}, "SLURM_LOCALID"},
};

// ---------------------------------------------------------------- the id file

constexpr const char* kIdMagic = "reduce_multi_gpu NCCL unique id";

std::string to_hex(const std::string& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (unsigned char c : bytes) {
        hex += digits[c >> 4];
        hex += digits[c & 15];
    }
    return hex;
}

std::optional<std::string> from_hex(const std::string& hex) {
    if (hex.size() % 2) return std::nullopt;
    std::string bytes;
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        unsigned value = 0;
        const auto [end, error] = std::from_chars(hex.data() + i, hex.data() + i + 2, value, 16);
        if (error != std::errc{} || end != hex.data() + i + 2) return std::nullopt;
        bytes += static_cast<char>(value);
    }
    return bytes;
}

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "host";
    return name;
}

struct IdFile {
    int ranks = 0;
    std::string job_tag;
    std::string id_bytes;
    std::map<int, std::string> tickets;  // by rank: the requests this file answers
};

// The file's contents, or nullopt when it is absent or not (yet) a whole id file.
std::optional<IdFile> read_id_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::string magic, ranks_word, job_word, id_word, hex;
    IdFile file;
    if (!std::getline(in, magic) || magic != kIdMagic) return std::nullopt;
    if (!(in >> ranks_word >> file.ranks) || ranks_word != "ranks") return std::nullopt;
    if (!(in >> job_word >> file.job_tag) || job_word != "job") return std::nullopt;
    if (!(in >> id_word >> hex) || id_word != "id") return std::nullopt;
    const auto bytes = from_hex(hex);
    if (!bytes || bytes->empty()) return std::nullopt;
    file.id_bytes = *bytes;
    std::string ticket_word, ticket;
    int rank = 0;
    while (in >> ticket_word) {
        if (ticket_word == "end") return file;  // the last line: the file is whole
        if (ticket_word != "ticket" || !(in >> rank >> ticket)) return std::nullopt;
        file.tickets[rank] = ticket;
    }
    return std::nullopt;  // cut short
}

// PATH.want.RANK: where a rank leaves its request.
std::string request_path(const std::string& path, int rank) { return path + ".want." + std::to_string(rank); }

// Write `text` to `path` atomically: a temporary file in the same folder, then rename().
void write_atomically(const std::string& path, const std::string& text, const char* what) {
    const std::string temporary = path + ".tmp." + host_name() + "." + std::to_string(getpid());
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << text;
        out.close();
        if (!out) {
            std::remove(temporary.c_str());
            throw BootstrapError(std::string("cannot write ") + what + " to " + temporary + ": " + std::strerror(errno));
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string reason = std::strerror(errno);
        std::remove(temporary.c_str());
        throw BootstrapError("cannot rename " + temporary + " to " + path + ": " + reason);
    }
}

// The job tag as one word in the file ("-" for none).
std::string tag_word(const std::string& job_tag) {
    std::string tag = job_tag.empty() ? "-" : job_tag;
    for (char& c : tag) {
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') c = '_';
    }
    return tag;
}


}  // namespace

// ---------------------------------------------------------------- the command line

std::string collective_name(Collective collective) {
    return collective == Collective::AllReduce ? "allreduce" : "reduce";
}

MultiGpuOptions parse_multi_gpu_options(const std::vector<std::string>& args) {
    MultiGpuOptions options;
    bool vector_given = false, bytes_given = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& option = args[i];
        auto value = [&]() -> const std::string& { return option_value(args, i); };
        if (read_common_option(option, value, options)) continue;
        if (option == "--n") {
            options.n = count_in_range(option, value(), 0, "a count");
        } else if (option == "--type") {
            const std::string& text = value();
            if (text == "int") options.type = ValueType::Int32;
            else if (text == "float") options.type = ValueType::Float32;
            else if (text == "double") options.type = ValueType::Float64;
            else throw UsageError("--type takes int, float or double, not '" + text + "'");
        } else if (option == "--gpus") {
            options.gpus = parse_int_in_range(option, value(), 1, 1024);
        } else if (option == "--collective") {
            const std::string& text = value();
            if (text == "allreduce") options.collective = Collective::AllReduce;
            else if (text == "reduce") options.collective = Collective::Reduce;
            else throw UsageError("--collective takes allreduce or reduce, not '" + text + "'");
        } else if (option == "--vector") {
            options.vector_elements = count_in_range(option, value(), 1, "a count of floats");
            vector_given = true;
        } else if (option == "--allreduce-bytes") {
            const std::string& text = value();
            const std::size_t bytes = count_in_range(option, text, 4, "a byte count");
            if (bytes % sizeof(float)) {
                throw UsageError("--allreduce-bytes takes a multiple of 4 (the vector is floats), not '" + text + "'");
            }
            options.vector_elements = bytes / sizeof(float);
            bytes_given = true;
        } else if (option == "--measure") {
            const std::string& text = value();
            if (text == "both") options.measure = Measure::Both;
            else if (text == "reduction") options.measure = Measure::Reduction;
            else if (text == "allreduce") options.measure = Measure::AllReduce;
            else throw UsageError("--measure takes both, reduction or allreduce, not '" + text + "'");
        } else if (option == "--no-baseline") {
            options.baseline = false;
        } else if (option == "--gate-after-flush") {
            options.gate_after_flush = true;
        } else if (option == "--gate-at-once") {
            options.gate_after_flush = false;
        } else if (option == "--link-peak-gbps") {
            const std::string& text = value();
            char* end = nullptr;
            const double peak = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0' || !std::isfinite(peak) || peak <= 0) {
                throw UsageError("--link-peak-gbps takes a positive number, not '" + text + "'");
            }
            options.link_peak_gbps = peak;
        } else if (option == "--csv") {
            options.csv = true;
        } else if (option == "--count-gpus") {
            options.count_gpus = true;
        } else if (option == "--rank") {
            options.rank = parse_int_in_range(option, value(), 0, 1 << 24);
        } else if (option == "--ranks") {
            options.ranks = parse_int_in_range(option, value(), 1, 1 << 24);
        } else if (option == "--id-file") {
            options.id_file = value();
            if (options.id_file.empty()) throw UsageError("--id-file needs a path");
        } else if (option == "--timeout") {
            options.timeout_s = parse_int_in_range(option, value(), 1, 86400);
        } else {
            throw UsageError("unknown option '" + option + "' (see --help)");
        }
    }
    if (vector_given && bytes_given) throw UsageError("choose one of --vector and --allreduce-bytes");
    if (options.rank.has_value() != options.ranks.has_value()) {
        throw UsageError("--rank and --ranks go together: give both, or let the launcher set them");
    }
    return options;
}

std::string multi_gpu_usage_text() {
    std::ostringstream out;
    out << "reduce_multi_gpu: one sum across G GPUs: shard the input, reduce7 on each shard, one NCCL\n"
           "collective of one value; then the element-wise all-reduce of a float vector\n\n"
           "usage: reduce_multi_gpu [options]\n"
           "  --n COUNT          values to sum, 0 to 2^" << kMaxLog2Elements << " (default 2^30)\n"
        << "  --type T           int, float (default) or double\n"
           "  --gpus G           GPUs 0 .. G-1 driven by this one process (default: every GPU present)\n"
           "  --collective C     allreduce (default: every GPU gets the sum) or reduce (rank 0 only)\n"
           "  --iters N          timed runs (default 20)\n"
           "  --warmup N         untimed runs before them (default 3)\n"
           "  --seed S           input seed (default 2026)\n"
           "  --measure M        both (default), reduction, or allreduce\n"
           "  --vector N         floats per GPU in the element-wise all-reduce (default 2^28 = 1 GiB)\n"
           "  --allreduce-bytes B   the same, in bytes\n"
           "  --link-peak-gbps X    NVLink peak per GPU and direction, instead of NVML's\n"
           "  --no-baseline      do not time reduce7 on one GPU over the whole input\n"
           "  --gate-at-once     open the start gate as soon as every sum is enqueued, while the GPUs'\n"
           "                     L2 flushes may still run (the start-skew A/B of docs/09-multi-gpu.md)\n"
           "  --gate-after-flush open it only once every GPU's flush has finished (the default)\n"
           "  --csv              one CSV row per measurement instead of the table\n"
           "one process per GPU (how NCCL runs across machines):\n"
           "  --rank R --ranks N    this process's rank and the job's size; without them, the\n"
           "                     variables mpirun (Open MPI), mpiexec (MPICH) or srun set\n"
           "  --id-file PATH     where rank 0 writes the NCCL id for the others: a file every rank\n"
           "                     can read (a shared filesystem across machines)\n"
           "  --timeout S        how long a rank waits for the others (default 120 s)\n"
           "  --count-gpus       print how many GPUs this process sees, and exit\n"
           "  --help             this text\n\n"
           "exit status: 0 all results verified, 1 a result failed verification, 2 usage error,\n"
           "3 CUDA, NCCL or runtime error (no GPU, too large for a GPU, a rank missing)\n";
    return out.str();
}

// ---------------------------------------------------------------- which rank this process is

Environment process_environment() {
    return [](const char* name) -> const char* { return std::getenv(name); };
}

ProcessLayout process_layout(const MultiGpuOptions& options, const Environment& env) {
    ProcessLayout layout;
    if (options.rank) {
        layout.one_process_per_gpu = true;
        layout.rank = *options.rank;
        layout.ranks = *options.ranks;
        layout.source = "--rank " + std::to_string(layout.rank) + " --ranks " + std::to_string(layout.ranks);
    } else {
        for (const Launcher& launcher : kLaunchers) {
            const auto rank = env_int(env, launcher.rank, 0);
            if (!rank) continue;
            std::optional<int> size;
            std::string size_name;
            for (const char* name : launcher.sizes) {
                if (name && (size = env_int(env, name, 1))) {
                    size_name = name;
                    break;
                }
            }
            if (!size) {
                throw UsageError(std::string(launcher.rank) + " is set but " + launcher.sizes[0] +
                                 " is not: give --rank R --ranks N");
            }
            layout.rank = *rank;
            layout.ranks = *size;
            layout.local_rank = env_int(env, launcher.local_rank, 0);
            layout.source = std::string(launcher.name) + " (" + launcher.rank + ", " + size_name + ")";
            // A launcher that starts one process means the usual mode: this process, every GPU.
            layout.one_process_per_gpu = layout.ranks > 1;
            break;
        }
    }
    if (layout.rank >= layout.ranks) {
        throw UsageError("rank " + std::to_string(layout.rank) + " is not below the job's " +
                         std::to_string(layout.ranks) + " ranks (from " + layout.source + ")");
    }
    if (!layout.one_process_per_gpu) {
        layout.rank = 0;
        layout.ranks = 1;
        layout.local_rank.reset();
        if (!options.id_file.empty()) {
            throw UsageError("--id-file is for one process per GPU: give --rank R --ranks N, or start the "
                             "ranks with mpirun or srun");
        }
        return layout;
    }
    if (options.id_file.empty()) {
        throw UsageError("rank " + std::to_string(layout.rank) + " of " + std::to_string(layout.ranks) + " (from " +
                         layout.source + ") needs --id-file PATH, a file every rank can read, for the NCCL id");
    }
    if (options.gpus) {
        throw UsageError("--gpus is for one process driving several GPUs; with ranks, each process drives one");
    }
    return layout;
}

int local_gpu_of(const ProcessLayout& layout, int visible) {
    if (visible < 1) return 0;
    return (layout.local_rank ? *layout.local_rank : layout.rank) % visible;
}

// ---------------------------------------------------------------- the NCCL id through a file

std::string launch_job_tag(const Environment& env) {
    for (const char* name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"}) {
        if (const char* value = env(name); value && *value) return value;
    }
    if (const char* job = env("SLURM_JOB_ID"); job && *job) {
        const char* step = env("SLURM_STEP_ID");
        return std::string(job) + "." + (step ? step : "");
    }
    return "";
}

IdRequest request_unique_id(const std::string& path, int rank) {
    std::random_device entropy;  // the kernel's random source: two runs never draw the same ticket
    std::string bytes(16, '\0');
    for (char& byte : bytes) byte = static_cast<char>(entropy() & 0xFF);
    IdRequest request{rank, to_hex(bytes)};
    write_atomically(request_path(path, rank), request.ticket + "\n", "the request for the NCCL id");
    return request;
}

std::map<int, std::string> read_id_requests(const std::string& path, int ranks) {
    std::map<int, std::string> tickets;
    for (int rank = 1; rank < ranks; ++rank) {
        std::ifstream in(request_path(path, rank));
        std::string ticket;
        if (in >> ticket && ticket.size() == 32 && from_hex(ticket)) tickets[rank] = ticket;
    }
    return tickets;
}

void publish_unique_id(const std::string& path, const std::string& id_bytes, int ranks, const std::string& job_tag,
                       const std::map<int, std::string>& tickets) {
    std::ostringstream text;
    text << kIdMagic << "\nranks " << ranks << "\njob " << tag_word(job_tag) << "\nid " << to_hex(id_bytes) << "\n";
    for (const auto& [rank, ticket] : tickets) text << "ticket " << rank << " " << ticket << "\n";
    text << "end\n";
    write_atomically(path, text.str(), "the NCCL id");
}

void answer_id_requests(const std::string& path, const std::string& id_bytes, int ranks, const std::string& job_tag,
                        const std::atomic<bool>& stop) {
    std::optional<std::map<int, std::string>> published;
    while (!stop.load()) {
        const auto tickets = read_id_requests(path, ranks);
        if (!published || tickets != *published) {
            publish_unique_id(path, id_bytes, ranks, job_tag, tickets);
            published = tickets;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

std::string wait_for_unique_id(const std::string& path, int ranks, const std::string& job_tag,
                               const IdRequest& request, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string found;  // what the file held, when it was not for this rank of this job
    for (;;) {
        if (const auto file = read_id_file(path)) {
            const auto ticket = file->tickets.find(request.rank);
            const bool this_job = file->ranks == ranks && file->job_tag == tag_word(job_tag);
            if (this_job && ticket != file->tickets.end() && ticket->second == request.ticket) return file->id_bytes;
            if (!this_job) {
                found = "; " + path + " is for a job of " + std::to_string(file->ranks) + " ranks" +
                        (file->job_tag == "-" ? "" : " (job " + file->job_tag + ")") +
                        ", left from another run? rank 0 replaces it when it starts";
            } else {
                found = "; " + path + " is for a job like this one but does not answer this rank's request (" +
                        request_path(path, request.rank) + "): left by a run that ended early? rank 0 of this run"
                        " answers every request when it starts";
            }
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        // Polling 10 times a second costs nothing and starts the job at most 0.1 s late.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
    throw BootstrapError("no NCCL id for rank " + std::to_string(request.rank) + " of this job of " +
                         std::to_string(ranks) + " ranks in " + path + " after " + std::to_string(seconds) +
                         " s: is rank 0 running, and is " + path + " on a filesystem every rank sees?" + found);
}

void withdraw_id_request(const std::string& path, const IdRequest& request) {
    std::remove(request_path(path, request.rank).c_str());
}

void remove_unique_id(const std::string& path) { std::remove(path.c_str()); }

// ---------------------------------------------------------------- NVLink multicast off

void disable_nvlink_multicast() {
    // NVLink SHARP (NVLS) multicast: NVSwitch reduces and broadcasts in the switch. On the
    // shared lent machines a program that uses it can put the host's GPUs out of service,
    // so it stays off whatever the caller's environment says (the last argument: overwrite).
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
    setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
}

std::string nccl_protocol_setting() {
    const char* value = std::getenv("NCCL_PROTO");
    return value && *value ? value : "default";
}

std::string nvlink_multicast_line() {
    std::string line = "NVLink multicast (NVLS) off:";
    for (const char* name : {"NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"}) {
        const char* value = std::getenv(name);
        line += std::string(" ") + name + "=" + (value ? value : "(unset)");
    }
    return line;
}
