// The desktop shell stays thin: it starts the engine's server and shows its page.
// (The workbench UI and `basin serve` arrive with the workbench issue; until then
// the shell explains how to use the CLI.)
export const SHELL_MESSAGE = "Basin desktop: the workbench UI is not built yet; use `npx basin run <pipeline.ts>`.";
