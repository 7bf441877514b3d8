// GraphQL's context is the domain's (domain/context.ts): who is asking, and the app's services.
export type { Context, Services, Viewer } from '../domain/context.ts';
export { anonymousContext, authenticate, contextFor, createContext } from '../domain/context.ts';
