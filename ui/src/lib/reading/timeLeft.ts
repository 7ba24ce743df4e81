// "About N minutes left" in the reading queue, from the reader's own pace: the median time they
// spent on the responses they submitted (the median, so one response left open over lunch does
// not make the rest look long). Said only once a few are submitted: before that there is no pace.

/** Submitted responses with a recorded time before a pace is given. */
export const PACE_FROM = 3

export interface QueueTiming {
  status: 'not_started' | 'draft' | 'submitted'
  /** Time the rating has recorded so far, in seconds; null before it is started. */
  seconds_on_task: number | null
}

export interface TimeLeft {
  /** Median seconds per submitted response. */
  paceSeconds: number
  /** Seconds left: the pace for each response not started, and what is left of it for each draft. */
  seconds: number
  text: string
}

export function timeLeft(items: QueueTiming[]): TimeLeft | null {
  const times = items
    .filter((i) => i.status === 'submitted' && (i.seconds_on_task ?? 0) > 0)
    .map((i) => i.seconds_on_task as number)
    .sort((a, b) => a - b)
  if (times.length < PACE_FROM || items.every((i) => i.status === 'submitted')) return null
  const middle = times.length / 2
  const pace = times.length % 2 === 1 ? times[Math.floor(middle)] : (times[middle - 1] + times[middle]) / 2
  const seconds = items
    .filter((i) => i.status !== 'submitted')
    .reduce((sum, i) => sum + Math.max(pace - (i.seconds_on_task ?? 0), 0), 0)
  return { paceSeconds: pace, seconds, text: `${describe(seconds)} left at your pace (${describe(pace, false)} a response)` }
}

/** "About 25 minutes", "About 2 h 10 min", "Less than a minute". */
function describe(seconds: number, capital = true): string {
  const minutes = Math.round(seconds / 60)
  const phrase =
    minutes < 1
      ? 'less than a minute'
      : minutes < 90
        ? `about ${minutes} minute${minutes === 1 ? '' : 's'}`
        : `about ${Math.floor(minutes / 60)} h ${minutes % 60} min`
  return capital ? phrase[0].toUpperCase() + phrase.slice(1) : phrase
}
