// meta-select-allreduce rejects names it does not know (metac checks its
// flags first; metac-opt passes them straight to the pass).
// RUN: not metac-opt %s --meta-select-allreduce=algorithm=butterfly 2>&1 | FileCheck %s --check-prefix=ALGORITHM
// ALGORITHM: error: unknown all-reduce algorithm 'butterfly' (expected library, ring, tree or hierarchical)
// RUN: not metac-opt %s --meta-select-allreduce=compress=int8 2>&1 | FileCheck %s --check-prefix=COMPRESS
// COMPRESS: error: unknown all-reduce compression 'int8' (expected none, bf16, fp16, topk:RATIO (0 < RATIO <= 1) or powersgd:RANK (a whole number >= 1))
module {
}
