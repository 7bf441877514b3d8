// oidc-provider ships no types: the tests use its constructor and its request handler only.
declare module 'oidc-provider' {
  export default class Provider {
    constructor(issuer: string, configuration: object);
    callback(): (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
  }
}
