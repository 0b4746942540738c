// The workbench's entry: connects to the engine that served this page (the token
// comes from the URL `basin serve` printed) and renders the app.
import { createRoot } from "react-dom/client";
import { WsEngineClient } from "../common/ws_client.js";
import { App } from "./App.js";
import "./styles.css";

const token = new URLSearchParams(location.search).get("token") ?? "";
const client = new WsEngineClient({ url: `ws://${location.host}/?token=${encodeURIComponent(token)}` });
createRoot(document.getElementById("root")!).render(<App client={client} />);
