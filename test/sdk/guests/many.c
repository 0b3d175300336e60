/*
 * many: TOOL_COUNT tools (40 unless -DTOOL_COUNT=N), to page tools/list past one page of 16. Each tool
 * answers its own name. Built from sdk/c/subako.h at test time (test/sdk/c.test.ts).
 */
#define SUBAKO_IMPLEMENTATION
#include "subako.h"

#ifndef TOOL_COUNT
#define TOOL_COUNT 40
#endif

static void answer_name(subako_call *call) { subako_text(call, call->tool->name); }

static char names[TOOL_COUNT][16];
static subako_tool tools[TOOL_COUNT];

int main(void) {
  for (int i = 0; i < TOOL_COUNT; i++) {
    snprintf(names[i], sizeof names[i], "tool_%02d", i);
    tools[i] = (subako_tool){.name = names[i], .description = "Answers its own name.", .handler = answer_name};
  }
  return subako_serve(tools, TOOL_COUNT);
}
