// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace: instantiates the tracepoints declared in rdmatrace_trace.h
 * (the one file that defines CREATE_TRACE_POINTS).
 */
#include "rdt.h"

#define CREATE_TRACE_POINTS
#include "rdmatrace_trace.h"
