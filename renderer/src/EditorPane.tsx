// The Monaco editor host: one model per open file (kept across tab switches so
// undo history survives), Ctrl/Cmd+S saves, Ctrl/Cmd+Enter runs.
import { useEffect, useRef } from "react";
import { monaco } from "./monaco_setup.js";

export function EditorPane(props: {
  model: monaco.editor.ITextModel | undefined;
  theme: "dark" | "light";
  onSave(): void;
  onRun(): void;
  onReady(editor: monaco.editor.IStandaloneCodeEditor): void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<monaco.editor.IStandaloneCodeEditor | undefined>(undefined);
  const actions = useRef(props);
  actions.current = props;

  useEffect(() => {
    const ed = monaco.editor.create(host.current!, {
      model: null,
      automaticLayout: true,
      fontSize: 13,
      minimap: { enabled: false },
      scrollBeyondLastLine: false,
      fixedOverflowWidgets: true,
      tabSize: 2,
    });
    ed.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyS, () => actions.current.onSave());
    ed.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter, () => actions.current.onRun());
    editor.current = ed;
    actions.current.onReady(ed);
    return () => ed.dispose();
  }, []);

  useEffect(() => {
    const ed = editor.current;
    if (ed && ed.getModel() !== (props.model ?? null)) ed.setModel(props.model ?? null);
  }, [props.model]);

  useEffect(() => monaco.editor.setTheme(props.theme === "dark" ? "basin-dark" : "basin-light"), [props.theme]);

  return <div className="editor-host" ref={host} data-testid="editor" />;
}
