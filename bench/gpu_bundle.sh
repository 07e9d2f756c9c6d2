#!/usr/bin/env bash
# Packs executables built on this machine (Debian 12) to run on another
# Linux machine, such as the GPU machine (Ubuntu 24.04-like, CUDA 13 driver,
# CUDA libraries from python's nvidia-* wheels, no Open MPI, OpenBLAS or
# oneDNN installed):
#   bench/gpu_bundle.sh [--no-tar] DIR EXE...
# DIR/bin    the EXEs (plus Open MPI's orted and mpirun when they use MPI)
# DIR/lib    every shared library they need (per ldd) except glibc's own,
#            libstdc++ and libgcc_s (the other machine's are newer) and the
#            CUDA libraries (libcuda, libcublas*, libcudart*, libnccl*,
#            libcudnn*, libnvrtc*, libnvJitLink*, ...), which that machine
#            provides; lib/openmpi and lib/pmix hold the MPI components a
#            process loads at MPI_Init (those whose own libraries are here:
#            no UCX, libfabric, verbs, PSM or OpenSHMEM ones)
# DIR/lib/compat  this machine's libstdc++ and libgcc_s, used only where
#            the other machine lacks them or has older ones
# DIR/share, DIR/etc  Open MPI's and PMIx's help texts and settings
# DIR/env.sh  to source (bash) there: LD_LIBRARY_PATH (DIR/lib, then every
#            directory of python3's nvidia/ packages holding a lib*.so*, then
#            /usr/local/nvidia/lib64 and /usr/local/cuda/lib64 where they
#            exist), PATH, and Open MPI's and PMIx's installation directories
#            pointed at DIR, so that MPI_Init, a singleton included, and
#            mpirun use the bundle's copies only.
# DIR.tar.xz the same, to carry (unpack there with `tar xJf` or
#            `python3 -m tarfile -e DIR.tar.xz .`); --no-tar skips it.
# The bundle is relocatable. DIR is replaced when it holds an earlier
# bundle, refused when it holds anything else.
#   bench/gpu_bundle.sh /tmp/gpu build/bin/metart-cuda-tests prog1 prog2
#   # there: source /tmp/gpu/env.sh && /tmp/gpu/bin/prog1 ...
#   # check: source DIR/env.sh && ldd DIR/bin/* | grep 'not found'
set -euo pipefail

tar=1
if [ "${1:-}" = --no-tar ]; then
  tar=0
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 [--no-tar] DIR EXE..." >&2
  exit 2
fi
dir=$1
shift
for exe in "$@"; do
  if [ ! -f "$exe" ] || [ ! -x "$exe" ]; then
    echo "$0: $exe: not an executable file" >&2
    exit 1
  fi
done
if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ] &&
  [ ! -f "$dir/env.sh" ]; then
  echo "$0: $dir exists and is not a bundle: not replacing it" >&2
  exit 1
fi
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib/compat"
dir=$(cd "$dir" && pwd)
# Marks DIR as a bundle (to replace) until the real env.sh is written.
echo 'echo "incomplete bundle: rerun bench/gpu_bundle.sh" >&2; return 1' >"$dir/env.sh"

# glibc's libraries: the other machine's own must be used.
glibc_re='^(linux-vdso|linux-gate|ld-linux[-a-z0-9_]*|libc|libm|libmvec|libpthread|libdl|librt|libutil|libresolv|libanl|libnsl|libBrokenLocale|libthread_db|libnss_[a-z]+|libcidn|libc_malloc_debug)\.so(\.[0-9]+)*$'
# The C++ runtime: the other machine's is newer; ours goes to lib/compat.
compat_re='^(libstdc\+\+|libgcc_s)\.so(\.[0-9]+)*$'
# The CUDA libraries and the driver's: the other machine provides them.
cuda_re='^lib(cuda|cudart|cublas|cublasLt|nccl|cudnn[_a-z0-9]*|nvrtc[-_a-z0-9.]*|nvJitLink|cufft[a-z]*|curand|cusparse[a-zA-Z]*|cusolver[a-zA-Z]*|nvToolsExt|nvtx[0-9a-z_]*|cupti|nvblas|nvidia-[-a-z0-9]+|nvshmem[_a-z0-9]*|cufile[_a-z]*)\.so(\.[0-9]+)*$'
# Open MPI components that need libraries the other machine lacks (UCX,
# libfabric, verbs, PSM, netlink) or that only OpenSHMEM loads.
mca_skip_re='^lib(oshmem|ucp|ucs|uct|ucm|fabric|ibverbs|rdmacm|efa|psm_infinipath|psm2|infinipath|nl-[-a-z0-9]+)\.so'

declare -A libs=()    # soname -> path on this machine
declare -A missing=() # sonames not found here
scan() { # ELF...: records what ldd resolves for them
  local line
  while IFS= read -r line; do
    if [[ $line =~ ^[[:space:]]*([^[:space:]]+)\ =\>\ not\ found ]]; then
      [[ ${BASH_REMATCH[1]} =~ $cuda_re ]] || missing[${BASH_REMATCH[1]}]=1
    elif [[ $line =~ ^[[:space:]]*([^[:space:]]+)\ =\>\ (/[^[:space:]]+) ]]; then
      libs[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    fi
  done < <(ldd "$@" 2>/dev/null || true)
}

# The executables.
uses_mpi=0
cp -L "$@" "$dir/bin/"
scan "$@"
if [ -n "${libs[libmpi.so.40]:-}" ]; then
  uses_mpi=1
fi

# Open MPI: orted (a singleton's MPI_Init starts one), mpirun, the
# components and PMIx's, the help texts and the settings.
mpi_pkglibdir=
pmix_pkglibdir=
if [ $uses_mpi = 1 ]; then
  mpi_path() { # ompi_info's directory NAME, else DEFAULT
    local value=
    if command -v ompi_info >/dev/null; then
      value=$(ompi_info --path "$1" 2>/dev/null | awk -F': *' 'NR==1{print $2}')
    fi
    echo "${value:-$2}"
  }
  multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  mpi_bindir=$(mpi_path bindir /usr/bin)
  mpi_pkglibdir=$(mpi_path pkglibdir "/usr/lib/$multiarch/openmpi/lib/openmpi3")
  mpi_pkgdatadir=$(mpi_path pkgdatadir /usr/share/openmpi)
  mpi_sysconfdir=$(mpi_path sysconfdir /etc/openmpi)
  for tool in orted orterun; do
    if [ -x "$mpi_bindir/$tool" ]; then
      cp -L "$mpi_bindir/$tool" "$dir/bin/"
      scan "$mpi_bindir/$tool"
    else
      echo "$0: warning: no $mpi_bindir/$tool: MPI_Init and mpirun will fail" >&2
    fi
  done
  if [ -f "$dir/bin/orterun" ]; then
    cp "$dir/bin/orterun" "$dir/bin/mpirun"
    cp "$dir/bin/orterun" "$dir/bin/mpiexec"
  fi
  mkdir -p "$dir/lib/openmpi" "$dir/share/openmpi" "$dir/etc/openmpi"
  skipped=()
  kept=()
  for component in "$mpi_pkglibdir"/mca_*.so; do
    deps=$(ldd "$component" 2>/dev/null || true)
    if grep -q 'not found' <<<"$deps" ||
      awk '{print $1}' <<<"$deps" | grep -Eq "$mca_skip_re"; then
      skipped+=("$(basename "$component" .so)")
    else
      kept+=("$component")
    fi
  done
  cp -L "${kept[@]}" "$dir/lib/openmpi/"
  scan "${kept[@]}"
  echo "Open MPI components left out: ${skipped[*]:-none}"
  cp -L "$mpi_pkgdatadir"/help-*.txt "$dir/share/openmpi/"
  if [ -e "$mpi_pkgdatadir/amca-param-sets" ]; then
    cp -rL "$mpi_pkgdatadir/amca-param-sets" "$dir/share/openmpi/"
  fi
  for file in openmpi-mca-params.conf openmpi-default-hostfile; do
    if [ -f "$mpi_sysconfdir/$file" ]; then
      cp -L "$mpi_sysconfdir/$file" "$dir/etc/openmpi/"
    fi
  done
  # PMIx (Debian's is external, with its own components and help texts).
  if [ -n "${libs[libpmix.so.2]:-}" ]; then
    pmix_lib=$(readlink -f "${libs[libpmix.so.2]}")
    for candidate in "$(dirname "$pmix_lib")/pmix2/lib/pmix" \
      "$(dirname "$pmix_lib")/pmix"; do
      if [ -d "$candidate" ]; then
        pmix_pkglibdir=$candidate
        break
      fi
    done
    mkdir -p "$dir/lib/pmix" "$dir/share/pmix" "$dir/etc/pmix"
    if [ -n "$pmix_pkglibdir" ]; then
      if compgen -G "$pmix_pkglibdir/*.so" >/dev/null; then
        cp -L "$pmix_pkglibdir"/*.so "$dir/lib/pmix/"
        scan "$pmix_pkglibdir"/*.so
      fi
      pmix_share=$(dirname "$(dirname "$pmix_pkglibdir")")/share/pmix
      if compgen -G "$pmix_share/*.txt" >/dev/null; then
        cp -L "$pmix_share"/*.txt "$dir/share/pmix/"
      fi
    fi
  fi
fi

# The libraries.
for name in "${!libs[@]}"; do
  if [[ $name =~ $glibc_re ]] || [[ $name =~ $cuda_re ]]; then
    continue
  elif [[ $name =~ $compat_re ]]; then
    cp -L "${libs[$name]}" "$dir/lib/compat/$name"
  else
    cp -L "${libs[$name]}" "$dir/lib/$name"
  fi
done
for name in "${!missing[@]}"; do
  echo "$0: warning: $name is needed but not found here" >&2
done

# The newest C++ runtime versions the bundle needs: env.sh uses lib/compat
# where the other machine's libstdc++ or libgcc_s lacks one.
newest() { # PREFIX: the newest version named PREFIX_* the bundle's ELFs need
  find "$dir/bin" "$dir/lib" -maxdepth 2 -type f ! -path '*/compat/*' \
    -exec readelf -V --wide {} + 2>/dev/null |
    { grep -oE "Name: $1_[0-9.]+" || true; } | awk '{print $2}' | sort -uV | tail -1
}
need_glibcxx=$(newest GLIBCXX)
need_cxxabi=$(newest CXXABI)
need_gcc=$(newest GCC)

cat >"$dir/env.sh" <<EOF
# shellcheck shell=bash
# Source (bash) on the machine that runs the bundle: see bench/gpu_bundle.sh.
metac_bundle=\$(cd "\$(dirname "\${BASH_SOURCE[0]:-$dir/env.sh}")" && pwd)
metac_bundle_versions="libstdc++.so.6:$need_glibcxx:$need_cxxabi libgcc_s.so.1:$need_gcc"
EOF
cat >>"$dir/env.sh" <<'EOF'
metac_bundle_path=$metac_bundle/lib

# This machine's libstdc++ and libgcc_s unless one is missing or too old.
metac_bundle_system_has() { # SONAME VERSION...: whether the system's has them
  local soname=$1 file='' version
  shift
  file=$( (/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null) |
    awk -v n="$soname" '$1 == n && /x86-64/ {print $NF; exit}')
  [ -n "$file" ] && [ -f "$file" ] || return 1
  for version in "$@"; do
    [ -z "$version" ] || grep -qaF "$version" "$file" || return 1
  done
}
for metac_bundle_spec in $metac_bundle_versions; do
  IFS=: read -r -a metac_bundle_parts <<<"$metac_bundle_spec"
  if ! metac_bundle_system_has "${metac_bundle_parts[@]}"; then
    metac_bundle_path=$metac_bundle_path:$metac_bundle/lib/compat
    break
  fi
done

# The CUDA libraries: python's nvidia-* wheels, the driver's, the toolkit's.
metac_bundle_python=${METAC_BUNDLE_PYTHON:-$(command -v python3 || true)}
if [ -n "$metac_bundle_python" ]; then
  while IFS= read -r metac_bundle_d; do
    if [ -n "$metac_bundle_d" ]; then
      metac_bundle_path=$metac_bundle_path:$metac_bundle_d
    fi
  done < <("$metac_bundle_python" - 2>/dev/null <<'PY'
import os, site
roots = []
try:
    import nvidia
    roots += list(getattr(nvidia, "__path__", []))
except Exception:
    pass
places = []
try:
    places += site.getsitepackages()
except Exception:
    pass
try:
    places.append(site.getusersitepackages())
except Exception:
    pass
roots += [os.path.join(p, "nvidia") for p in places]
seen, found = set(), []
for root in roots:
    root = os.path.realpath(root)
    if root in seen or not os.path.isdir(root):
        continue
    seen.add(root)
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("stubs", "__pycache__"))
        if any(f.startswith("lib") and ".so" in f for f in files):
            found.append(here)
print("\n".join(found))
PY
  )
fi
for metac_bundle_d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do
  if [ -d "$metac_bundle_d" ]; then
    metac_bundle_path=$metac_bundle_path:$metac_bundle_d
  fi
done
export LD_LIBRARY_PATH=$metac_bundle_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$metac_bundle/bin:$PATH

# Open MPI and PMIx installed in the bundle (the singleton's orted, the
# components, the help texts, the settings), none from the system.
if [ -d "$metac_bundle/lib/openmpi" ]; then
  export OPAL_PREFIX=$metac_bundle OPAL_EXEC_PREFIX=$metac_bundle
  export OPAL_BINDIR=$metac_bundle/bin OPAL_LIBDIR=$metac_bundle/lib
  export OPAL_PKGLIBDIR=$metac_bundle/lib/openmpi
  export OPAL_DATAROOTDIR=$metac_bundle/share OPAL_DATADIR=$metac_bundle/share
  export OPAL_PKGDATADIR=$metac_bundle/share/openmpi
  export OPAL_SYSCONFDIR=$metac_bundle/etc/openmpi
  export OMPI_MCA_mca_base_component_path=$metac_bundle/lib/openmpi
  export PMIX_PREFIX=$metac_bundle PMIX_EXEC_PREFIX=$metac_bundle
  export PMIX_LIBDIR=$metac_bundle/lib PMIX_PKGLIBDIR=$metac_bundle/lib/pmix
  export PMIX_DATADIR=$metac_bundle/share PMIX_PKGDATADIR=$metac_bundle/share/pmix
  export PMIX_SYSCONFDIR=$metac_bundle/etc/pmix
  export PMIX_MCA_mca_base_component_path=$metac_bundle/lib/pmix
fi
# hwloc: no plugins from the system (another hwloc version's).
export HWLOC_PLUGINS_PATH=$metac_bundle/lib/hwloc
# Containers run as root and often forbid ptrace (vader's CMA copies).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
unset metac_bundle_path metac_bundle_spec metac_bundle_parts metac_bundle_d \
  metac_bundle_python metac_bundle_versions
unset -f metac_bundle_system_has
EOF

# Sizes.
mib() { du -sb "$@" | awk '{s += $1} END {printf "%.1f MiB", s / 1048576}'; }
echo "bundle $dir:"
for part in bin lib share etc; do
  if [ -e "$dir/$part" ]; then
    printf '  %-6s %s\n' "$part" "$(mib "$dir/$part")"
  fi
done
echo "  largest:"
find "$dir" -type f -size +1M -printf '%s %P\n' | sort -rn | head -8 |
  awk '{printf "    %7.1f MiB  %s\n", $1 / 1048576, $2}'
echo "total: $(mib "$dir")"
if [ $tar = 1 ]; then
  rm -f "$dir.tar.xz"
  XZ_OPT=${XZ_OPT:--3 -T0} tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
  echo "total compressed: $dir.tar.xz, $(mib "$dir.tar.xz")"
fi
