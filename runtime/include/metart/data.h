/*===- data.h - task distributions and tensor files -----------------------===*
 *
 * Task distributions sampled reproducibly on the host, and safetensors files
 * for parameters, checkpoints and fixed episodes. Part of the metart C API
 * (see metart.h for the conventions: status returns, opaque handles).
 *
 * Reproducibility: the tasks of a draw are a pure function of (seed, split,
 * iteration, task index), so any rank can draw any slice of a meta-batch
 * and N ranks together draw exactly what one rank would.
 *
 *===----------------------------------------------------------------------===*/

#ifndef METART_DATA_H
#define METART_DATA_H

#include "metart/metart.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Task distributions
 *===----------------------------------------------------------------------===*/

typedef struct metart_tasks metart_tasks;

/** Which stream of tasks: meta-training or evaluation. */
typedef enum metart_split {
  METART_SPLIT_TRAIN = 0,
  METART_SPLIT_EVAL = 1,
} metart_split;

/** The MAML paper's sinusoid regression: y = A sin(x - phase), with A, phase
 *  and x uniform in their ranges; samples are f32[1] -> f32[1] (or f64). */
typedef struct metart_sinusoid_config {
  double amplitude[2];
  double phase[2];
  double input[2];
  int64_t support;
  int64_t query;
  int32_t dtype; /* METART_F32 or METART_F64 */
} metart_sinusoid_config;

metart_status metart_tasks_create_sinusoid(const metart_sinusoid_config *config,
                                           uint64_t seed,
                                           metart_tasks **out_tasks);

/** Token sequences for small sequence models: each task draws a
 *  permutation pi of [0, vocab); a sample is x, `length` tokens uniform in
 *  [0, vocab), with targets y[0] = pi(x[0]) and y[t] = pi(x[t - 1]) (the
 *  previous token, mapped). Inputs and targets are METART_I64[length];
 *  vocab is at most 2^20, vocab and length at least 2. */
typedef struct metart_sequence_config {
  int64_t vocab;
  int64_t length;
  int64_t support;
  int64_t query;
} metart_sequence_config;

metart_status metart_tasks_create_sequence(const metart_sequence_config *config,
                                           uint64_t seed,
                                           metart_tasks **out_tasks);

/** N-way K-shot image classification, the shape shared by
 *  metart_tasks_create_fashion_mnist and metart_tasks_create_image_folder.
 *  Samples are images f32[1, side, side] (or f64) with pixel values
 *  intensity / 255 (intensity / 65535 for 16-bit PNGs), targets METART_I64
 *  scalars. A task of draw t is sampled from its own counter-based streams
 *  of (seed, split, t, task index), like the sinusoid's:
 *    - `ways` distinct classes, uniformly from the allowed classes (a
 *      partial Fisher-Yates shuffle of their list); the i-th class drawn
 *      gets label i (labels are remapped per task to 0..ways-1);
 *    - for the i-th class, shots + query distinct images of it (without
 *      replacement, uniformly), the first `shots` for the support set, the
 *      others for the query set.
 *  Both sets are class-major: support sample j has label j / shots, query
 *  sample j label j / query. So support = ways * shots samples and
 *  query = ways * query samples per task. */

/** Fashion-MNIST (the idx files of Debian's dataset-fashion-mnist, read
 *  with zlib, gzipped or not): METART_SPLIT_TRAIN draws images of the 60000
 *  training images, METART_SPLIT_EVAL of the 10000 test images, so
 *  evaluating on the training classes still sees unseen images. Both files
 *  are read when the handle is created, and shared by the handles of a
 *  process that read the same directory. Samples are f32[1, 28, 28]. */
typedef struct metart_fashion_mnist_config {
  /** The directory of {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz;
   *  NULL or "": /usr/share/datasets/fashion-mnist. */
  const char *path;
  /** The classes tasks draw from: classes[0..num_classes), distinct, each
   *  0 to 9 (Fashion-MNIST has ten), at least `ways` of them. */
  int64_t classes[10];
  int64_t num_classes;
  int64_t ways;  /* at least 1 */
  int64_t shots; /* support images per class, at least 1 */
  int64_t query; /* query images per class; shots + query <= 1000 */
  int32_t dtype; /* METART_F32 or METART_F64 */
} metart_fashion_mnist_config;

/** Loads the idx files (METART_ERROR_IO naming the file and what is wrong
 *  when one is missing or corrupt) and creates the distribution. */
metart_status
metart_tasks_create_fashion_mnist(const metart_fashion_mnist_config *config,
                                  uint64_t seed, metart_tasks **out_tasks);

/** Classes of PNG images in folders, like Omniglot: `path` holds one
 *  subdirectory per class, classes numbered in the byte order of their
 *  names, each holding images `*.png` (any case), also taken in name order;
 *  names starting with '.' and other files are skipped. Both splits draw
 *  from all classes (to evaluate on held-out classes, give the evaluation
 *  its own folder), with different streams. Every image is decoded and
 *  resized when the handle is created: 1/2/4/8/16-bit grayscale, gray +
 *  alpha, RGB, RGBA and palette images become one luminance channel,
 *  0.299 R + 0.587 G + 0.114 B (ITU-R 601-2, as PIL's convert("L"), with
 *  no gamma correction), alpha ignored; then resized to
 *  image_size x image_size with area interpolation (each output pixel is
 *  the mean of the input over its footprint, pixels cut by the footprint's
 *  edge weighted by their coverage; non-square images are stretched).
 *  Values are computed in double and stored in the dtype. */
typedef struct metart_image_folder_config {
  const char *path;
  int64_t image_size; /* at least 1 */
  int64_t ways;       /* at least 1, at most the number of classes */
  int64_t shots;      /* at least 1 */
  int64_t query;      /* every class has at least shots + query images */
  int32_t dtype;      /* METART_F32 or METART_F64 */
} metart_image_folder_config;

/** Reads the folder (METART_ERROR_IO naming the directory or file for a
 *  missing directory, a folder without classes or an undecodable PNG;
 *  METART_ERROR_INVALID_ARGUMENT for fewer than `ways` classes or a class
 *  with fewer than shots + query images) and creates the distribution. */
metart_status
metart_tasks_create_image_folder(const metart_image_folder_config *config,
                                 uint64_t seed, metart_tasks **out_tasks);

/** Fixed episodes from a safetensors file with `support.x`, `support.y`,
 *  `query.x`, `query.y`, each with a leading episode axis and a sample axis
 *  ([N, samples, sample shape...]; inputs and targets of any dtype: integer
 *  inputs are token ids).
 *  Task i of draw t is episode i mod N in METART_SPLIT_EVAL, and
 *  (offset(t) + i) mod N in METART_SPLIT_TRAIN, where offset(t) is the high
 *  64 bits of N * (t * 0x9E3779B97F4A7C15 mod 2^64): floor(N frac(t / the
 *  golden ratio)), so successive iterations start at evenly spread
 *  episodes and iteration 0 at episode 0. */
metart_status metart_tasks_create_episodes(const char *path,
                                           metart_tasks **out_tasks);

void metart_tasks_destroy(metart_tasks *tasks);
/** The message of the last error of a call on `tasks` ("" if none). With a
 *  null handle, the message of this thread's last error that had no handle
 *  to hold it (a failed metart_tasks_create_*, a call with null tasks). */
const char *metart_tasks_last_error(const metart_tasks *tasks);

/** Element type, rank and shape (without the task and sample axes) of the
 *  samples' inputs (`which` = 0) and targets (`which` = 1). */
metart_status metart_tasks_sample_type(const metart_tasks *tasks, int which,
                                       int32_t *out_dtype, int32_t *out_rank,
                                       const int64_t **out_shape);
/** Samples per task in the support and query sets. */
void metart_tasks_sizes(const metart_tasks *tasks, int64_t *out_support,
                        int64_t *out_query);

/** Draws tasks [first, first + count) of draw `iteration` of `split` into
 *  host buffers laid out [count, samples, sample shape...]: support inputs
 *  and targets, query inputs and targets. */
metart_status metart_tasks_draw(metart_tasks *tasks, metart_split split,
                                int64_t iteration, int64_t first, int64_t count,
                                void *support_inputs, void *support_targets,
                                void *query_inputs, void *query_targets);

/*===----------------------------------------------------------------------===*
 * Safetensors files
 *===----------------------------------------------------------------------===*/

/** A named host tensor for writing. */
typedef struct metart_named_tensor {
  const char *name;
  int32_t dtype;
  int32_t rank;
  const int64_t *shape;
  const void *data;
} metart_named_tensor;

/** Writes a safetensors file atomically: to `path`.tmp, flushed and synced,
 *  then renamed over `path`, so a crash never leaves a partial file. */
metart_status metart_safetensors_write(const char *path,
                                       const metart_named_tensor *tensors,
                                       int64_t count, char *error,
                                       size_t error_size);

typedef struct metart_safetensors metart_safetensors;

/** Opens and validates a safetensors file (header JSON, dtypes, shapes,
 *  offsets within the file); a corrupt file is METART_ERROR_IO with a
 *  message saying what is wrong, written to `error`. A file with a dtype
 *  metart lacks (F16, BF16, U8, ...) is METART_ERROR_UNSUPPORTED. */
metart_status metart_safetensors_open(const char *path,
                                      metart_safetensors **out_file,
                                      char *error, size_t error_size);
void metart_safetensors_close(metart_safetensors *file);

/** Finds tensor `name`: its dtype, rank, shape and host data (owned by the
 *  file, aligned to its element size). METART_ERROR_INVALID_ARGUMENT when
 *  absent. */
metart_status metart_safetensors_find(const metart_safetensors *file,
                                      const char *name, int32_t *out_dtype,
                                      int32_t *out_rank,
                                      const int64_t **out_shape,
                                      const void **out_data);

#ifdef __cplusplus
}
#endif

#endif /* METART_DATA_H */
