import { reviewWebUrl } from '../../domain/gate/links';
import { getReviewOperation } from './reviews';

// The links a held write's answer gives, made in one place for REST, MCP and MCP tasks.

/** Where agents and scripts follow a held write over REST (`review.url`). */
export function reviewUrl(apiBaseUrl: string, reviewId: string): string {
  return `${apiBaseUrl}/v1${getReviewOperation.path.replace(':id', reviewId)}`;
}

export interface ReviewLinks {
  url: string;
  webUrl: string;
}

export function reviewLinks(urls: { apiBaseUrl: string; publicUrl: string }, reviewId: string): ReviewLinks {
  return { url: reviewUrl(urls.apiBaseUrl, reviewId), webUrl: reviewWebUrl(urls.publicUrl, reviewId) };
}
