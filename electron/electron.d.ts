// The slice of Electron's API the shell uses. The `electron` package (and its
// binary) is not installed in this repository's environment, so these declarations
// stand in for its own typings; they follow Electron 33+'s documented signatures.
declare module "electron" {
  export interface WebPreferences {
    preload?: string;
    contextIsolation?: boolean;
    sandbox?: boolean;
    nodeIntegration?: boolean;
    nodeIntegrationInWorker?: boolean;
    nodeIntegrationInSubFrames?: boolean;
    webSecurity?: boolean;
    allowRunningInsecureContent?: boolean;
    webviewTag?: boolean;
    spellcheck?: boolean;
    navigateOnDragDrop?: boolean;
  }
  export interface BrowserWindowConstructorOptions {
    width?: number;
    height?: number;
    minWidth?: number;
    minHeight?: number;
    title?: string;
    show?: boolean;
    backgroundColor?: string;
    autoHideMenuBar?: boolean;
    webPreferences?: WebPreferences;
  }
  export interface Event {
    preventDefault(): void;
  }
  export interface MessageEvent {
    data: unknown;
    ports: MessagePortMain[];
  }
  export class MessagePortMain {
    postMessage(message: unknown, transfer?: MessagePortMain[]): void;
    start(): void;
    close(): void;
    on(event: "message", listener: (e: MessageEvent) => void): this;
    on(event: "close", listener: () => void): this;
  }
  export class MessageChannelMain {
    port1: MessagePortMain;
    port2: MessagePortMain;
  }
  export interface WebContents {
    id: number;
    postMessage(channel: string, message: unknown, transfer?: MessagePortMain[]): void;
    setWindowOpenHandler(handler: (details: { url: string }) => { action: "deny" | "allow" }): void;
    on(event: "will-navigate", listener: (e: Event, url: string) => void): this;
    on(event: "render-process-gone", listener: (e: Event, details: { reason: string; exitCode: number }) => void): this;
    on(event: "destroyed", listener: () => void): this;
    reload(): void;
    isDestroyed(): boolean;
  }
  export class BrowserWindow {
    constructor(options?: BrowserWindowConstructorOptions);
    webContents: WebContents;
    loadURL(url: string): Promise<void>;
    once(event: "ready-to-show", listener: () => void): this;
    show(): void;
    static getAllWindows(): BrowserWindow[];
  }
  export interface IpcMainEvent {
    sender: WebContents;
  }
  export const ipcMain: {
    on(channel: string, listener: (event: IpcMainEvent, ...args: unknown[]) => void): void;
  };
  export interface IpcRendererEvent {
    ports: MessagePort[];
  }
  export const ipcRenderer: {
    send(channel: string, ...args: unknown[]): void;
    on(channel: string, listener: (event: IpcRendererEvent, ...args: unknown[]) => void): void;
  };
  export const contextBridge: {
    exposeInMainWorld(apiKey: string, api: Record<string, unknown>): void;
  };
  export interface CustomScheme {
    scheme: string;
    privileges?: {
      standard?: boolean;
      secure?: boolean;
      supportFetchAPI?: boolean;
      corsEnabled?: boolean;
      stream?: boolean;
      codeCache?: boolean;
    };
  }
  export const protocol: {
    registerSchemesAsPrivileged(schemes: CustomScheme[]): void;
    handle(scheme: string, handler: (request: Request) => Response | Promise<Response>): void;
  };
  export interface Session {
    webRequest: {
      onBeforeRequest(
        listener: (details: { url: string }, callback: (response: { cancel?: boolean }) => void) => void,
      ): void;
    };
    setPermissionRequestHandler(
      handler: (webContents: WebContents, permission: string, callback: (granted: boolean) => void) => void,
    ): void;
  }
  export const session: { defaultSession: Session };
  export const app: {
    whenReady(): Promise<void>;
    on(event: "window-all-closed" | "before-quit", listener: (e: Event) => void): void;
    on(event: "activate", listener: () => void): void;
    on(event: "web-contents-created", listener: (e: Event, contents: WebContents) => void): void;
    quit(): void;
    exit(code?: number): void;
    getPath(name: "home" | "documents" | "userData"): string;
    isPackaged: boolean;
    commandLine: { appendSwitch(name: string, value?: string): void };
  };
  export const dialog: {
    showOpenDialog(options: {
      title?: string;
      properties: ("openDirectory" | "createDirectory")[];
    }): Promise<{ canceled: boolean; filePaths: string[] }>;
  };
  export interface MenuItemConstructorOptions {
    label?: string;
    role?: string;
    accelerator?: string;
    type?: "separator" | "normal";
    submenu?: MenuItemConstructorOptions[];
    click?: () => void;
  }
  export class Menu {
    static buildFromTemplate(template: MenuItemConstructorOptions[]): Menu;
    static setApplicationMenu(menu: Menu | null): void;
  }
}
