# -*- Python -*- lit configuration for metac.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "METAC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".meta", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.metac_obj_root, "test")

config.substitutions.append(("%examples", os.path.join(config.metac_src_root, "examples")))
config.substitutions.append(("%metac_src", config.metac_src_root))
config.substitutions.append(("%metac_obj", config.metac_obj_root))

llvm_config.use_default_substitutions()

# Tests that expect no GPU (CUDA requested and refused) skip on machines with
# one.
import shutil
import subprocess
if shutil.which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                          timeout=20).returncode == 0:
            config.available_features.add("cuda-device")
    except (OSError, subprocess.TimeoutExpired):
        pass
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# metac-generate-kernels compiles CUDA kernels where the CUDA toolkit's
# libdevice is (CUDA_HOME, else /usr/local/cuda); no GPU is needed.
import os
cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
if os.path.exists(os.path.join(cuda_home, "nvvm", "libdevice",
                               "libdevice.10.bc")):
    config.available_features.add("cuda-toolkit")

# Distributed tests launch MPI processes on this machine: as root, and more
# ranks than cores.
if shutil.which("mpirun"):
    config.available_features.add("mpi")
    # Each job gets its own session directory (test/bin/mpirun says why).
    config.environment["METAC_REAL_MPIRUN"] = shutil.which("mpirun")
    llvm_config.with_environment(
        "PATH", os.path.join(config.test_source_root, "bin"), append_path=True)
    for name, value in [("OMPI_ALLOW_RUN_AS_ROOT", "1"),
                        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                        ("OMPI_MCA_rmaps_base_oversubscribe", "1")]:
        config.environment[name] = value

# A real torchrun (a virtual environment's torch: METAC_TORCHRUN names it;
# bench/peers.sh's venv has one) runs launchers-torchrun.test; without one
# launchers.test still gives the ranks torchrun's environment itself.
torchrun = os.environ.get("METAC_TORCHRUN")
if torchrun and os.access(torchrun, os.X_OK):
    config.available_features.add("torchrun")
    config.environment["TORCHRUN"] = torchrun

tools = [
    ToolSubst("metac", unresolved="fatal"),
    ToolSubst("metac-opt", unresolved="fatal"),
    ToolSubst("metac-eval", unresolved="fatal"),
    ToolSubst("metac-gradcheck", unresolved="fatal"),
]
if config.metac_fuzzer_enabled:
    config.available_features.add("fuzzer")
    tools.append(ToolSubst("metac-fuzz-frontend", unresolved="fatal"))
    tools.append(ToolSubst("metac-fuzz-safetensors", unresolved="fatal"))
    tools.append(ToolSubst("metac-fuzz-cluster", unresolved="fatal"))
    tools.append(ToolSubst("metac-fuzz-checkpoint-index", unresolved="fatal"))
llvm_config.add_tool_substitutions(tools, [config.metac_tools_dir, config.llvm_tools_dir])
