import { defineSuite } from "../check.js";
import { optimisticConcurrency } from "./optimistic-concurrency.js";

export const cluster = defineSuite({
  name: "cluster",
  summary: "the cluster has the properties every other check relies on",
  checks: [optimisticConcurrency],
});
