/*===- CApi.c - calls of the data API made from C -------------------------===*
 *
 * Compiled as C, which also checks that metart/data.h is a C header.
 *
 *===----------------------------------------------------------------------===*/

#include "CApi.h"

metart_status metartTestDrawWithSplit(metart_tasks *tasks, int split,
                                      int64_t count, void *support_inputs,
                                      void *support_targets, void *query_inputs,
                                      void *query_targets) {
  return metart_tasks_draw(tasks, (metart_split)split, 0, 0, count,
                           support_inputs, support_targets, query_inputs,
                           query_targets);
}
