/*===- CApi.h - calls of the data API made from C ----------------*- C -*-===*
 *
 * Arguments that a C caller can pass but C++ cannot form without undefined
 * behaviour (an enum value outside the enum), passed by CApi.c.
 *
 *===----------------------------------------------------------------------===*/

#ifndef METART_TEST_DATA_CAPI_H
#define METART_TEST_DATA_CAPI_H

#include "metart/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/** metart_tasks_draw with `split` given as an int. */
metart_status metartTestDrawWithSplit(metart_tasks *tasks, int split,
                                      int64_t count, void *support_inputs,
                                      void *support_targets, void *query_inputs,
                                      void *query_targets);

#ifdef __cplusplus
}
#endif

#endif /* METART_TEST_DATA_CAPI_H */
