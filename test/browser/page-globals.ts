// Types for the functions that playwright runs inside the page (evaluate,
// $eval, waitForFunction). The project's tsconfig has no DOM lib, and adding
// one (even with a `/// <reference lib="dom" />`) retypes fetch and Buffer
// bodies for every file, so each test file declares the few page globals it
// uses with these, in its own module scope:
//
//   declare const document: PageDocument;

export interface PageElement {
  id: string;
  textContent: string | null;
  nextElementSibling: PageElement | null;
  dataset: Record<string, string | undefined>;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): PageElement[];
}

export interface PageImage extends PageElement {
  alt: string;
  src: string;
  currentSrc: string;
  complete: boolean;
  naturalWidth: number;
  naturalHeight: number;
  decode(): Promise<void>;
}

export interface PageDocument {
  body: PageElement;
  images: PageImage[];
  querySelector(selector: string): PageElement | null;
  getElementById(id: string): PageElement | null;
}
