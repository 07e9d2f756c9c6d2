/*===- comm.h - collectives between the ranks of a job --------------------===*
 *
 * Distributed training: the processes of a job (launched by mpirun or srun)
 * form a world; a context with a communicator attached lays the world out
 * as a mesh of six named axes, in this order: task = 0, data = 1,
 * tensor = 2, pipeline = 3, expert = 4, sequence = 5, ranks row-major over
 * the mesh shape (the sequence coordinate varies fastest). Compiled
 * per-rank code calls the collectives below. Part of the metart C API (see
 * metart.h for the conventions).
 *
 * With no communicator attached (a single process), every collective runs
 * over a group of 1: it copies x to y when they differ.
 *
 * A dead rank never hangs the job: when a peer process dies, every
 * surviving rank prints "metart: rank R: lost rank P (pid N): ..." and
 * exits non-zero; a collective that makes no progress for
 * METART_COMM_TIMEOUT seconds (default 50, 0: never) stops the job too.
 *
 *===----------------------------------------------------------------------===*/

#ifndef METART_COMM_H
#define METART_COMM_H

#include "metart/metart.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The mesh axes. Bit i of an axes mask is mesh axis i. */
typedef enum metart_axis {
  METART_AXIS_TASK = 0,
  METART_AXIS_DATA = 1,
  METART_AXIS_TENSOR = 2,
  METART_AXIS_PIPELINE = 3,
  METART_AXIS_EXPERT = 4,
  METART_AXIS_SEQUENCE = 5,
} metart_axis;
#define METART_NUM_AXES 6
/** The mask of every axis: the whole world. */
#define METART_ALL_AXES ((1 << METART_NUM_AXES) - 1)

/*===----------------------------------------------------------------------===*
 * The world: the processes of the job
 *===----------------------------------------------------------------------===*/

/** Joins the job's world (idempotent): when launched by mpirun or srun
 *  (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE, SLURM_NTASKS), initialises
 *  MPI and starts the watchdog of dead ranks; otherwise a world of 1 without
 *  MPI. The message of a failure is metart_context_last_error(NULL). */
metart_status metart_world_init(void);
/** This process's rank in the world, the world's size, and the rank among
 *  the processes on this host (0, 1, 0 before metart_world_init). */
int64_t metart_world_rank(void);
int64_t metart_world_size(void);
int64_t metart_world_local_rank(void);
/** Leaves the world after every rank got here: waits for the others, stops
 *  the watchdog and finalises MPI. Idempotent; also runs at exit. */
void metart_world_finalize(void);
/** Stops the whole job with `code` (MPI_Abort), for a failure on one rank
 *  that the others may be waiting on; without MPI, exits. */
void metart_world_abort(int code);

/*===----------------------------------------------------------------------===*
 * Communicators: the world as a mesh, per context
 *===----------------------------------------------------------------------===*/

/** Attaches to `c` a communicator over the mesh `mesh` (task, data, tensor,
 *  pipeline sizes; 0 means 1), replacing any earlier one, with one group
 *  per non-empty axes mask. Collective: every rank of the world calls it
 *  with the same mesh. Joins the world first. A mesh whose product is not
 *  the world's size is METART_ERROR_INVALID_ARGUMENT. */
metart_status metart_comm_attach(metart_context *c,
                                 const int64_t mesh[METART_NUM_AXES]);
/** Whether `c` has a communicator. */
int metart_comm_attached(const metart_context *c);
/** The mesh of `c` and this rank's coordinates on it (all 1 and 0 without
 *  a communicator). Either output may be NULL. */
metart_status metart_comm_mesh(const metart_context *c,
                               int64_t out_mesh[METART_NUM_AXES],
                               int64_t out_coords[METART_NUM_AXES]);
/** This rank's position in the group of `axes_mask` and the group's size. */
metart_status metart_comm_group(const metart_context *c, int32_t axes_mask,
                                int64_t *out_rank, int64_t *out_size);
/** Waits until every rank of the group of `axes_mask` got here (and the
 *  context's queued work is done). Not counted in the statistics. */
metart_status metart_barrier(metart_context *c, int32_t axes_mask);

/*===----------------------------------------------------------------------===*
 * Collectives (what compiled code calls)
 *
 * A collective over a mask runs among the ranks whose coordinates agree on
 * every axis outside the mask; group ranks are in coordinate order on the
 * masked axes. Element types f32, f64, i32, i64.
 *===----------------------------------------------------------------------===*/

typedef enum metart_reduction {
  METART_REDUCE_SUM = 0,
  METART_REDUCE_MAX = 1
} metart_reduction;

/* y = reduction of x over the group; x and y have the same shape; y may
   alias x. */
metart_status metart_all_reduce(metart_context *c, const metart_tensor *x,
                                const metart_tensor *y, int32_t axes_mask,
                                int32_t reduction);

/* How an all-reduce moves its data. LIBRARY: MPI's or NCCL's own choice.
   On MPI: RING, reduce-scatter then all-gather around a ring (each rank
   sends 2(n-1)/n of the buffer); TREE, binomial reduce to the group's first
   rank and broadcast back (2 log2 n messages of the whole buffer);
   HIERARCHICAL, reduce-scatter within a node, all-reduce across nodes,
   all-gather within the node (nodes: the ranks sharing memory, or
   METART_RANKS_PER_NODE consecutive group ranks). Each gives every rank
   the same bits. NCCL chooses for itself (NCCL_ALGO=Ring|Tree forces it). */
typedef enum metart_allreduce_algorithm {
  METART_ALLREDUCE_LIBRARY = 0,
  METART_ALLREDUCE_RING = 1,
  METART_ALLREDUCE_TREE = 2,
  METART_ALLREDUCE_HIERARCHICAL = 3
} metart_allreduce_algorithm;

/* metart_all_reduce by `algorithm` (a metart_allreduce_algorithm), its
   data on the wire in `wire` (a metart_dtype): x's own type, or for f32 and
   f64 tensors METART_BF16 or METART_F16, which halves (quarters) the bytes:
   x is rounded to `wire`, reduced with f32 additions rounded to `wire` at
   every step (as NCCL reduces bf16), and widened into y; in a group of one
   nothing is sent and nothing rounded. */
metart_status metart_all_reduce_algorithm(metart_context *c,
                                          const metart_tensor *x,
                                          const metart_tensor *y,
                                          int32_t axes_mask, int32_t reduction,
                                          int32_t algorithm, int32_t wire);
/* y = concatenation of every group member's x along `dim`, in group-rank
   order (coordinate order on the masked axes). x may lie inside y (it is
   copied aside first). */
metart_status metart_all_gather(metart_context *c, const metart_tensor *x,
                                const metart_tensor *y, int32_t axes_mask,
                                int64_t dim);
/* All-to-all: x splits along `split_dim` into one part per group member,
   in group-rank order; member r receives every member's part r, and y is
   those parts concatenated along `concat_dim` in group-rank order
   (shard.all_to_all: the dimension a tensor is split on over the group
   moves from `concat_dim` to `split_dim`). */
metart_status metart_all_to_all(metart_context *c, const metart_tensor *x,
                                const metart_tensor *y, int32_t axes_mask,
                                int64_t split_dim, int64_t concat_dim);
/* y = this rank's slice of x along `dim` (x.shape[dim] / group size, at this
   rank's position in the group). No communication. */
metart_status metart_all_slice(metart_context *c, const metart_tensor *x,
                               const metart_tensor *y, int32_t axes_mask,
                               int64_t dim);
/* y = reduction over the group of x, scattered along `dim`
   (reduce-scatter). */
metart_status metart_reduce_scatter(metart_context *c, const metart_tensor *x,
                                    const metart_tensor *y, int32_t axes_mask,
                                    int64_t dim, int32_t reduction);
/* metart_reduce_scatter by `algorithm` (a metart_allreduce_algorithm): on
   MPI every algorithm but LIBRARY reduce-scatters around a ring (n - 1
   steps of 1/n of the buffer); NCCL chooses for itself. */
metart_status metart_reduce_scatter_algorithm(
    metart_context *c, const metart_tensor *x, const metart_tensor *y,
    int32_t axes_mask, int64_t dim, int32_t reduction, int32_t algorithm);
/* y = root's x (root = group rank). */
metart_status metart_broadcast(metart_context *c, const metart_tensor *x,
                               const metart_tensor *y, int32_t axes_mask,
                               int64_t root);
/* Lossy sums of f32 gradients with error feedback, on host memory (the
   CPU backend). TOPK (parameter: the fraction of elements each rank
   sends, in (0, 1]): every rank sends its largest entries by magnitude as
   index-value pairs (8 bytes each), all-gathered and added in group order.
   POWERSGD (parameter: the rank r, a whole number >= 1): x viewed as a
   matrix [shape[0], rest] is summed as the rank-r product P Q^T from two
   all-reduces of (rows + cols) r floats, Q warm-started from the site's
   last call; a 1-d x, or a matrix whose factors would not be smaller, is
   summed exactly. What a rank did not send is kept per `site` (a number
   naming the call site) and added to its next x there. In a group of one
   y = x: nothing is sent, nothing kept. */
typedef enum metart_compression {
  METART_COMPRESS_TOPK = 1,
  METART_COMPRESS_POWERSGD = 2
} metart_compression;
metart_status metart_all_reduce_compressed(metart_context *c,
                                           const metart_tensor *x,
                                           const metart_tensor *y,
                                           int32_t axes_mask, int32_t method,
                                           double parameter, int64_t site);
/* The same, started asynchronously (see below). */
metart_status metart_all_reduce_compressed_start(
    metart_context *c, const metart_tensor *x, const metart_tensor *y,
    int32_t axes_mask, int32_t method, double parameter, int64_t site);

/* A stale-synchronous sum (bounded staleness on the task axis): the call
   of iteration t starts the all-reduce of x and returns in y the sum
   started by this `site`'s call t - staleness (zeros for t < staleness),
   waiting for it if it is still running. Ranks may thus run up to
   `staleness` iterations ahead of the slowest, and every rank still gets
   the same sums in the same order. staleness 0 is metart_all_reduce. On
   host memory (the CPU backend). */
metart_status metart_all_reduce_stale(metart_context *c, const metart_tensor *x,
                                      const metart_tensor *y, int32_t axes_mask,
                                      int64_t staleness, int64_t site);
/* meta.server_step: pushes this rank's partial outer gradients `grads`
   and meta-loss `loss` (its shares of the sums over the mesh) to the
   parameter servers and pulls the parameters into `params` (in place, the
   `count` tensors of one float type); `loss_out` receives the meta-loss
   the servers summed and `norms` (f64 [count]) the squared norm of each
   summed gradient. Needs metart_servers_join. Either memory. */
metart_status metart_server_step(metart_context *c,
                                 const metart_tensor *const *params,
                                 const metart_tensor *const *grads,
                                 int64_t count, const metart_tensor *loss,
                                 const metart_tensor *loss_out,
                                 const metart_tensor *norms);
/* Whether the context has made a stale-synchronous all-reduce with a
   staleness above 0 (its ranks then need not agree every iteration). */
int metart_has_stale_collectives(metart_context *c);

/* Asynchronous collectives: metart_all_reduce_algorithm and
   metart_reduce_scatter_algorithm started now and completed by
   metart_collective_wait(c, y), with y the same tensor. x must stay
   unchanged and y unread until the wait. On host memory over MPI they run
   on a communication thread while the caller computes; elsewhere (a group
   of one, device memory) they run at the start and the wait only reports.
   Every collective of the context keeps program order: a blocking one
   issued while asynchronous ones are in flight runs after them. */
metart_status metart_all_reduce_start(metart_context *c, const metart_tensor *x,
                                      const metart_tensor *y, int32_t axes_mask,
                                      int32_t reduction, int32_t algorithm,
                                      int32_t wire);
metart_status metart_reduce_scatter_start(metart_context *c,
                                          const metart_tensor *x,
                                          const metart_tensor *y,
                                          int32_t axes_mask, int64_t dim,
                                          int32_t reduction, int32_t algorithm);
/* Waits for the collective started into y; its error, if it failed. The
   part of its run the caller did not wait for counts as overlapped. */
metart_status metart_collective_wait(metart_context *c, const metart_tensor *y);

/* point to point inside the group of `axes_mask`, peer given as a group
   rank */
metart_status metart_send(metart_context *c, const metart_tensor *x,
                          int32_t axes_mask, int64_t peer);
metart_status metart_recv(metart_context *c, const metart_tensor *y,
                          int32_t axes_mask, int64_t peer);

/* Ring attention (sequence parallelism): q, k and v (and dy, gq, gk, gv)
   are this rank's block of positions of every sequence, block r held by
   group rank r of `axes_mask`. Each call equals metart_nn_attention,
   metart_nn_attention_backward or metart_nn_attention_double_backward on
   the whole sequences, this rank keeping its block of every result (dq, dk,
   dv, q_bar, k_bar, v_bar, dy_bar): the keys and values (and gk, gv) pass
   around the group's ring block by block (each rank computes on one block,
   then passes it on: the exchanges are not overlapped yet), and the
   key-side cotangents travel with their block back to its rank, so no rank
   holds all the keys. Causal attention masks by global position (blocks
   of queries and keys of one size). A group of one is plain attention. CPU
   backend only (METART_ERROR_UNSUPPORTED elsewhere); every exchange counts
   as a collective of `axes_mask` ("ring_exchange"). */
metart_status metart_nn_ring_attention(metart_context *c,
                                       const metart_tensor *q,
                                       const metart_tensor *k,
                                       const metart_tensor *v, double scale,
                                       int causal, int32_t axes_mask,
                                       const metart_tensor *y);
metart_status metart_nn_ring_attention_backward(
    metart_context *c, const metart_tensor *q, const metart_tensor *k,
    const metart_tensor *v, const metart_tensor *dy, double scale, int causal,
    int32_t axes_mask, const metart_tensor *dq, const metart_tensor *dk,
    const metart_tensor *dv);
metart_status metart_nn_ring_attention_double_backward(
    metart_context *c, const metart_tensor *q, const metart_tensor *k,
    const metart_tensor *v, const metart_tensor *dy, const metart_tensor *gq,
    const metart_tensor *gk, const metart_tensor *gv, double scale, int causal,
    int32_t axes_mask, const metart_tensor *q_bar, const metart_tensor *k_bar,
    const metart_tensor *v_bar, const metart_tensor *dy_bar);

/*===----------------------------------------------------------------------===*
 * Statistics, per axes mask
 *
 * Every collective counts for its mask: one call, its payload bytes (this
 * rank's x for all_reduce, broadcast, send and reduce_scatter; y for
 * all_gather and recv; 0 for all_slice and for any group of 1, where
 * nothing moves) and the wall time spent in it (event-timed on a GPU).
 *===----------------------------------------------------------------------===*/

typedef struct metart_comm_stats {
  int64_t calls;
  int64_t bytes;
  double seconds;
  /** Of `calls`, those started asynchronously (metart_*_start), and of
   *  `seconds`, the time they ran while the caller computed (their run time
   *  less the caller's wait for them). */
  int64_t async_calls;
  double overlapped_seconds;
} metart_comm_stats;

/** The counters of collectives over exactly `axes_mask` (0 to 15) since the
 *  last reset. Waits for timed device work. */
metart_status metart_comm_stats_get(metart_context *c, int32_t axes_mask,
                                    metart_comm_stats *out_stats);
/** The sum of the counters over every mask. */
metart_status metart_comm_stats_total(metart_context *c,
                                      metart_comm_stats *out_stats);
/** Zeroes the counters. */
void metart_comm_stats_reset(metart_context *c);
/** A mask's name: the names of its axes joined by '+' ("task",
 *  "task+data"); "none" for 0, "" for a value out of range. */
const char *metart_comm_axes_name(int32_t axes_mask);

#ifdef __cplusplus
}
#endif

#endif /* METART_COMM_H */
