// crawler 2.1.1 ships no type declarations; its API is 2.0.2's (the tests run both).
declare module "crawler-2.1" {
  export { default } from "crawler";
}
