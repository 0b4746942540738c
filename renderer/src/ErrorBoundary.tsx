// A failing panel shows its error in its own place, with a way to try again;
// the rest of the workbench stays (React unmounts the whole tree on an uncaught
// render or effect error, so every panel is wrapped in one of these).
import { Component, type ErrorInfo, type ReactNode } from "react";

export interface ErrorBoundaryProps {
  /** What the panel is, for the message ("the Output panel"). */
  name: string;
  children: ReactNode;
  /** A change of this key (another result, another file) tries the panel again. */
  resetKey?: unknown;
}

interface State {
  error: Error | undefined;
  key: unknown;
}

export class ErrorBoundary extends Component<ErrorBoundaryProps, State> {
  override state: State = { error: undefined, key: undefined };

  static getDerivedStateFromError(error: unknown): Partial<State> {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  static getDerivedStateFromProps(props: ErrorBoundaryProps, state: State): Partial<State> | null {
    return props.resetKey !== state.key ? { key: props.resetKey, error: undefined } : null;
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    console.error(`Basin: ${this.props.name} failed`, error, info.componentStack);
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <div className="panel-error" role="alert" data-testid="panel-error" data-panel-error={this.props.name}>
        <strong>{this.props.name} failed</strong>
        <pre>{error.message}</pre>
        <p className="muted">The rest of the workbench goes on working.</p>
        <button className="btn small" onClick={() => this.setState({ error: undefined })}>
          Try again
        </button>
      </div>
    );
  }
}
