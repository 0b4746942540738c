// The workbench's entry: connects to the engine — over the desktop app's
// MessagePort when the preload script exposes window.basin, else over the
// WebSocket of the `basin serve` that served this page — and renders the app.
import { createRoot } from "react-dom/client";
import { createClient, type MessageTarget, type PageLike } from "../common/transport.js";
import { App } from "./App.js";
import "./styles.css";

const client = createClient(window as unknown as PageLike & MessageTarget);
// The client keeps the token it was given (and the tab's sessionStorage, for reloads);
// the address bar (history, bookmarks, a shared screen) need not show it.
if (new URLSearchParams(location.search).has("token"))
  history.replaceState(history.state, "", location.pathname + location.hash);
createRoot(document.getElementById("root")!).render(<App client={client} />);
